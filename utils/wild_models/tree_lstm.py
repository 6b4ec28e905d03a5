"""Child-Sum Tree-LSTMs for sentence relatedness as treelstm.pytorch
(dasguptar) writes them: a plain `Tree` class with `parent`,
`num_children`, `children` and a `state` attribute set during the pass,
trees built by `read_tree` from a parent-pointer list inside forward
(the dataset's code), the encoder recursing over children before its
node (`self.forward(tree.children[idx], inputs)`), leaves given
`inputs[0].detach().new(1, mem_dim).fill_(0).requires_grad_()` states,
children's states gathered by `zip(*map(lambda x: x.state,
tree.children))`, the iou gates by `torch.split`, forget gates per child
by `repeat`, the similarity module's `mul`/`abs` distances, and SICK's
sparse target distribution from `math.floor`/`math.ceil` of a gold score,
against `F.kl_div` of the log-softmax."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Tree(object):
    def __init__(self):
        self.parent = None
        self.num_children = 0
        self.children = list()

    def add_child(self, child):
        child.parent = self
        self.num_children += 1
        self.children.append(child)

    def size(self):
        if getattr(self, '_size'):
            return self._size
        count = 1
        for i in range(self.num_children):
            count += self.children[i].size()
        self._size = count
        return self._size

    def depth(self):
        if getattr(self, '_depth'):
            return self._depth
        count = 0
        if self.num_children > 0:
            for i in range(self.num_children):
                child_depth = self.children[i].depth()
                if child_depth > count:
                    count = child_depth
            count += 1
        self._depth = count
        return self._depth


def read_tree(parents):
    trees = dict()
    root = None
    for i in range(1, len(parents) + 1):
        if i - 1 not in trees.keys() and parents[i - 1] != -1:
            idx = i
            prev = None
            while True:
                parent = parents[idx - 1]
                if parent == -1:
                    break
                tree = Tree()
                if prev is not None:
                    tree.add_child(prev)
                trees[idx - 1] = tree
                tree.idx = idx - 1
                if parent - 1 in trees.keys():
                    trees[parent - 1].add_child(tree)
                    break
                elif parent == 0:
                    root = tree
                    break
                else:
                    prev = tree
                    idx = parent
    return root


class ChildSumTreeLSTM(nn.Module):
    def __init__(self, in_dim, mem_dim):
        super().__init__()
        self.in_dim, self.mem_dim = in_dim, mem_dim
        self.ioux = nn.Linear(self.in_dim, 3 * self.mem_dim)
        self.iouh = nn.Linear(self.mem_dim, 3 * self.mem_dim)
        self.fx = nn.Linear(self.in_dim, self.mem_dim)
        self.fh = nn.Linear(self.mem_dim, self.mem_dim)

    def node_forward(self, inputs, child_c, child_h):
        child_h_sum = torch.sum(child_h, dim=0, keepdim=True)
        iou = self.ioux(inputs) + self.iouh(child_h_sum)
        i, o, u = torch.split(iou, iou.size(1) // 3, dim=1)
        i, o, u = torch.sigmoid(i), torch.sigmoid(o), torch.tanh(u)
        f = torch.sigmoid(self.fh(child_h) + self.fx(inputs).repeat(len(child_h), 1))
        fc = torch.mul(f, child_c)
        c = torch.mul(i, u) + torch.sum(fc, dim=0, keepdim=True)
        h = torch.mul(o, torch.tanh(c))
        return c, h

    def forward(self, tree, inputs):
        for idx in range(tree.num_children):
            self.forward(tree.children[idx], inputs)
        if tree.num_children == 0:
            child_c = inputs[0].detach().new(1, self.mem_dim).fill_(0.).requires_grad_()
            child_h = inputs[0].detach().new(1, self.mem_dim).fill_(0.).requires_grad_()
        else:
            child_c, child_h = zip(*map(lambda x: x.state, tree.children))
            child_c, child_h = torch.cat(child_c, dim=0), torch.cat(child_h, dim=0)
        tree.state = self.node_forward(inputs[tree.idx], child_c, child_h)
        return tree.state


class Similarity(nn.Module):
    def __init__(self, mem_dim, hidden_dim, num_classes):
        super().__init__()
        self.wh = nn.Linear(2 * mem_dim, hidden_dim)
        self.wp = nn.Linear(hidden_dim, num_classes)

    def forward(self, lvec, rvec):
        mult_dist = torch.mul(lvec, rvec)
        abs_dist = torch.abs(torch.add(lvec, -rvec))
        vec_dist = torch.cat((mult_dist, abs_dist), 1)
        out = torch.sigmoid(self.wh(vec_dist))
        return F.log_softmax(self.wp(out), dim=1)


class SimilarityTreeLSTM(nn.Module):
    def __init__(self, vocab_size=50, in_dim=16, mem_dim=24, hidden_dim=20, num_classes=5):
        super().__init__()
        self.num_classes = num_classes
        self.emb = nn.Embedding(vocab_size, in_dim, padding_idx=0)
        self.childsumtreelstm = ChildSumTreeLSTM(in_dim, mem_dim)
        self.similarity = Similarity(mem_dim, hidden_dim, num_classes)

    def map_label_to_target(self, label):
        target = torch.zeros(1, self.num_classes, dtype=torch.float)
        ceil, floor = int(math.ceil(label)), int(math.floor(label))
        if ceil == floor:
            target[0, floor - 1] = 1
        else:
            target[0, floor - 1] = ceil - label
            target[0, ceil - 1] = label - floor
        return target

    def forward(self, linput, lparents, rinput, rparents, gold_score):
        ltree, rtree = read_tree(lparents), read_tree(rparents)
        linputs, rinputs = self.emb(linput), self.emb(rinput)
        lstate, lhidden = self.childsumtreelstm(ltree, linputs)
        rstate, rhidden = self.childsumtreelstm(rtree, rinputs)
        output = self.similarity(lstate, rstate)
        target = self.map_label_to_target(gold_score)
        loss = F.kl_div(output, target, reduction="batchmean")
        predicted = torch.dot(torch.arange(1, self.num_classes + 1, dtype=torch.float), output.squeeze().exp())
        return loss, predicted, lhidden, rhidden


torch.manual_seed(0)
model = SimilarityTreeLSTM().eval()
check_gradients = True


def example_inputs():
    # "a man is playing a guitar" / "a person plays guitar" as dependency parents (1-based, 0 = root)
    return (torch.tensor([3, 11, 5, 7, 9, 21]), [2, 4, 4, 0, 6, 4],
            torch.tensor([3, 14, 8, 21]), [2, 3, 0, 3], 3.6)
