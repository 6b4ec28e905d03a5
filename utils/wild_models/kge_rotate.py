"""Knowledge-graph embeddings as DeepGraphLearning's KnowledgeGraphEmbedding
writes its KGEModel: entity and relation tables as uniform-initialized
nn.Parameters with `gamma` and `embedding_range` as frozen Parameters read
back with `.item()`, the scoring function picked from a dict of bound
methods by the model's name string, `torch.index_select` lookups shaped by
a `mode` string ('single', 'head-batch', 'tail-batch'), TransE by
`torch.norm(p=1)`, DistMult, ComplEx by `torch.chunk` real/imaginary
halves, RotatE with relation phases `cos`/`sin` and
`torch.stack([re, im]).norm(dim=0)`, and `train_step`'s loss: self-
adversarial negative sampling weights `F.softmax(neg * T).detach()`,
`F.logsigmoid`, subsampling weights and an N3 regularizer by
`norm(p=3) ** 3`."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class KGEModel(nn.Module):
    def __init__(self, model_name, nentity, nrelation, hidden_dim, gamma,
                 double_entity_embedding=False, double_relation_embedding=False):
        super().__init__()
        self.model_name, self.nentity, self.nrelation = model_name, nentity, nrelation
        self.hidden_dim, self.epsilon = hidden_dim, 2.0
        self.gamma = nn.Parameter(torch.Tensor([gamma]), requires_grad=False)
        self.embedding_range = nn.Parameter(torch.Tensor([(self.gamma.item() + self.epsilon) / hidden_dim]),
                                            requires_grad=False)
        self.entity_dim = hidden_dim * 2 if double_entity_embedding else hidden_dim
        self.relation_dim = hidden_dim * 2 if double_relation_embedding else hidden_dim
        self.entity_embedding = nn.Parameter(torch.zeros(nentity, self.entity_dim))
        nn.init.uniform_(self.entity_embedding, -self.embedding_range.item(), self.embedding_range.item())
        self.relation_embedding = nn.Parameter(torch.zeros(nrelation, self.relation_dim))
        nn.init.uniform_(self.relation_embedding, -self.embedding_range.item(), self.embedding_range.item())
        if model_name not in ['TransE', 'DistMult', 'ComplEx', 'RotatE']:
            raise ValueError('model %s not supported' % model_name)

    def forward(self, sample, mode='single'):
        if mode == 'single':
            head = torch.index_select(self.entity_embedding, dim=0, index=sample[:, 0]).unsqueeze(1)
            relation = torch.index_select(self.relation_embedding, dim=0, index=sample[:, 1]).unsqueeze(1)
            tail = torch.index_select(self.entity_embedding, dim=0, index=sample[:, 2]).unsqueeze(1)
        elif mode == 'head-batch':
            tail_part, head_part = sample
            batch_size, negative_sample_size = head_part.size(0), head_part.size(1)
            head = torch.index_select(self.entity_embedding, dim=0,
                                      index=head_part.view(-1)).view(batch_size, negative_sample_size, -1)
            relation = torch.index_select(self.relation_embedding, dim=0, index=tail_part[:, 1]).unsqueeze(1)
            tail = torch.index_select(self.entity_embedding, dim=0, index=tail_part[:, 2]).unsqueeze(1)
        elif mode == 'tail-batch':
            head_part, tail_part = sample
            batch_size, negative_sample_size = tail_part.size(0), tail_part.size(1)
            head = torch.index_select(self.entity_embedding, dim=0, index=head_part[:, 0]).unsqueeze(1)
            relation = torch.index_select(self.relation_embedding, dim=0, index=head_part[:, 1]).unsqueeze(1)
            tail = torch.index_select(self.entity_embedding, dim=0,
                                      index=tail_part.view(-1)).view(batch_size, negative_sample_size, -1)
        else:
            raise ValueError('mode %s not supported' % mode)
        model_func = {'TransE': self.TransE, 'DistMult': self.DistMult,
                      'ComplEx': self.ComplEx, 'RotatE': self.RotatE}
        return model_func[self.model_name](head, relation, tail, mode)

    def TransE(self, head, relation, tail, mode):
        score = head + (relation - tail) if mode == 'head-batch' else (head + relation) - tail
        return self.gamma.item() - torch.norm(score, p=1, dim=2)

    def DistMult(self, head, relation, tail, mode):
        score = head * (relation * tail) if mode == 'head-batch' else (head * relation) * tail
        return score.sum(dim=2)

    def ComplEx(self, head, relation, tail, mode):
        re_head, im_head = torch.chunk(head, 2, dim=2)
        re_relation, im_relation = torch.chunk(relation, 2, dim=2)
        re_tail, im_tail = torch.chunk(tail, 2, dim=2)
        if mode == 'head-batch':
            re_score = re_relation * re_tail + im_relation * im_tail
            im_score = re_relation * im_tail - im_relation * re_tail
            score = re_head * re_score + im_head * im_score
        else:
            re_score = re_head * re_relation - im_head * im_relation
            im_score = re_head * im_relation + im_head * re_relation
            score = re_score * re_tail + im_score * im_tail
        return score.sum(dim=2)

    def RotatE(self, head, relation, tail, mode):
        pi = 3.14159265358979323846
        re_head, im_head = torch.chunk(head, 2, dim=2)
        re_tail, im_tail = torch.chunk(tail, 2, dim=2)
        phase_relation = relation / (self.embedding_range.item() / pi)
        re_relation, im_relation = torch.cos(phase_relation), torch.sin(phase_relation)
        if mode == 'head-batch':
            re_score = re_relation * re_tail + im_relation * im_tail
            im_score = re_relation * im_tail - im_relation * re_tail
            re_score, im_score = re_score - re_head, im_score - im_head
        else:
            re_score = re_head * re_relation - im_head * im_relation
            im_score = re_head * im_relation + im_head * re_relation
            re_score, im_score = re_score - re_tail, im_score - im_tail
        score = torch.stack([re_score, im_score], dim=0).norm(dim=0)
        return self.gamma.item() - score.sum(dim=2)


class KGETrainer(nn.Module):
    """train_step's loss as a module: one batch of positives with their
    negatives, in the mode the sampler alternates."""

    def __init__(self):
        super().__init__()
        self.rotate = KGEModel('RotatE', 40, 6, 8, gamma=12.0, double_entity_embedding=True)
        self.complex = KGEModel('ComplEx', 40, 6, 8, gamma=12.0, double_entity_embedding=True,
                                double_relation_embedding=True)
        self.transe = KGEModel('TransE', 40, 6, 8, gamma=12.0)
        self.adversarial_temperature, self.regularization = 1.0, 1e-4

    def step_loss(self, kge, positive_sample, negative_sample, subsampling_weight, mode):
        negative_score = kge((positive_sample, negative_sample), mode=mode)
        negative_score = (F.softmax(negative_score * self.adversarial_temperature, dim=1).detach()
                          * F.logsigmoid(-negative_score)).sum(dim=1)
        positive_score = F.logsigmoid(kge(positive_sample)).squeeze(dim=1)
        positive_sample_loss = -(subsampling_weight * positive_score).sum() / subsampling_weight.sum()
        negative_sample_loss = -(subsampling_weight * negative_score).sum() / subsampling_weight.sum()
        loss = (positive_sample_loss + negative_sample_loss) / 2
        if kge.model_name == 'ComplEx':
            loss = loss + self.regularization * (kge.entity_embedding.norm(p=3) ** 3
                                                 + kge.relation_embedding.norm(p=3).norm(p=3) ** 3)
        return loss

    def forward(self, positive_sample, negative_sample, subsampling_weight, mode):
        losses = {}
        for kge in (self.rotate, self.complex, self.transe):
            losses[kge.model_name] = self.step_loss(kge, positive_sample, negative_sample,
                                                    subsampling_weight, mode)
        return sum(losses.values()), losses


torch.manual_seed(0)
model = KGETrainer().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    positive = torch.stack([torch.randint(0, 40, (5,), generator=g), torch.randint(0, 6, (5,), generator=g),
                            torch.randint(0, 40, (5,), generator=g)], dim=1)
    negative = torch.randint(0, 40, (5, 7), generator=g)
    subsampling_weight = 1.0 / torch.sqrt(torch.randint(4, 20, (5,), generator=g).float())
    return positive, negative, subsampling_weight, 'tail-batch'
