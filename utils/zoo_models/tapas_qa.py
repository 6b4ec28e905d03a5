"""TAPAS (a BERT over a flattened table: segment, column, row and rank
embeddings; cell selection averaged per cell with segmented reductions, and
an aggregation head) for table question answering."""
import torch
from transformers import TapasConfig, TapasForQuestionAnswering

from _examples import frozen, texts

config = TapasConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=64, vocab_size=128,
                     num_aggregation_labels=4, use_answer_as_supervision=True,
                     select_one_column=True, pad_token_id=0)
model = frozen(TapasForQuestionAnswering, config)


def example_kwargs():
    """What the tokenizer gives for two questions over a table of 2 columns
    and 2 rows (at other sizes, as many texts, the table's rows growing or
    cut with the length): the question's 3 tokens, then the table's cells of 1 or 2
    tokens each; `token_type_ids` holds each token's segment, column, row,
    previous label and the three rank ids."""
    kwargs = texts(config)
    batch, length = kwargs["input_ids"].shape
    # Tokens 0-2 are the question; 3-7 the cells (column, row) by token;
    # a longer text's table has more rows of one token per cell.
    columns = [0, 0, 0, 1, 1, 2, 1, 2] + [1 + i % 2 for i in range(max(0, length - 8))]
    rows = [0, 0, 0, 1, 1, 1, 2, 2] + [3 + i // 2 for i in range(max(0, length - 8))]
    columns, rows = torch.tensor(columns[:length]), torch.tensor(rows[:length])
    types = torch.zeros(batch, length, 7, dtype=torch.long)
    types[:, :, 0] = (columns > 0).long()
    types[:, :, 1] = columns
    types[:, :, 2] = rows
    types[:, :, 4] = rows  # rank of each cell's number in its column
    types[:, :, 5] = rows
    types = types * kwargs["attention_mask"].unsqueeze(-1)
    kwargs["token_type_ids"] = types
    return kwargs
