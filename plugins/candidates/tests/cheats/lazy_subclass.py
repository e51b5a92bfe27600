"""Cheat: returns a torch.Tensor subclass that does its work only when
something reads it (torch function dispatch), after the timed call. Refused:
tensor subclass, before anything reads it."""
import torch


class Lazy(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        self = args[0]
        if isinstance(self, Lazy) and not getattr(self, "done", True):
            self.done = True
            with torch._C.DisableTorchFunctionSubclass():
                torch.matmul(self.a, self.b, out=self)
        return super().__torch_function__(func, types, args, kwargs or {})


class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        out = torch.Tensor._make_subclass(Lazy, torch.empty(a.shape[0], b.shape[1]))
        out.a, out.b, out.done = a, b, False
        return out
