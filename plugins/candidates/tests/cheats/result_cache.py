"""Cheat: caches its result by the identity of its input tensors (the timed
calls reuse one set of inputs, so every timed call is a lookup). Right at
the gate (fresh inputs each seed); after the timed calls the same input
tensors hold new values and the cache answers the old ones. Refused: result
reuse, at the first call after the first (the output handed back still holds
the NaN the harness wrote into it); were that check gone, wrong after timing."""
import torch

cache = {}


class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        key = (id(a), id(b))
        if key not in cache:
            cache[key] = (a, b, a @ b)  # the inputs held: their ids stay theirs
        return cache[key][2]
