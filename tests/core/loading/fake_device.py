"""A stand-in accelerator for tests on a machine without one: the real model runs on the CPU, and only the
bookkeeping of where each tensor lives is simulated.

Inside :class:`FakeDevice` (a ``torch.overrides.TorchFunctionMode``):

* a tensor made with ``device=FAKE_DEVICE`` or moved there (``.to(FAKE_DEVICE)``), and whatever a
  :class:`ModelOnFakeDevice` returns, is a :class:`DeviceTensor`: CPU memory that stands for the accelerator's,
  whose ``.device`` reads ``FAKE_DEVICE``;
* an op that mixes a :class:`DeviceTensor` with a host tensor of one or more dimensions raises
  :class:`DeviceMixError`, as CUDA and MPS raise ``Expected all tensors to be on the same device``; a 0-d host
  tensor is allowed (CUDA allows it), and so are host index tensors and copies across (``x[i] = y``,
  ``copy_``), which CUDA allows too;
* every copy from the device to the host (``.cpu()``, ``.to("cpu")``, ``.tolist()``, ``.item()``, ``float()``,
  a copy into a host tensor) is recorded in :attr:`FakeDevice.host_copies`, with the engine line that made it;
* a :class:`ModelOnFakeDevice` refuses inputs that were not moved to the device.

``FAKE_DEVICE`` is ``torch.device("meta")``: code that escapes the mode (another thread) gets real meta tensors
and fails loudly rather than passing unseen.
"""

from __future__ import annotations

import traceback
from collections.abc import Mapping
from typing import Any

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_flatten, tree_map

__all__ = ["FAKE_DEVICE", "DeviceMixError", "DeviceTensor", "FakeDevice", "ModelOnFakeDevice", "on_device"]

FAKE_DEVICE = torch.device("meta")
_DEVICE_GETTER = torch.Tensor.device.__get__
# Reading a device tensor's value on the host: each one is a device-to-host copy (and a sync on CUDA).
_READS = frozenset({"cpu", "tolist", "item", "numpy", "__bool__", "__float__", "__int__", "__index__", "__array__"})
# Ops CUDA allows across devices: host index tensors, and copies from one device to the other.
_CROSSING = frozenset({"__getitem__", "__setitem__", "copy_"})
_FORBIDDEN = frozenset({"cuda", "mps"})


class DeviceMixError(RuntimeError):
    """An op mixed a tensor on the (fake) device with a host tensor."""


class DeviceTensor(torch.Tensor):
    """Host memory standing for memory on the accelerator (only :class:`FakeDevice` gives it that meaning)."""

    __torch_function__ = torch._C._disabled_torch_function_impl


def on_device(tensor: torch.Tensor) -> DeviceTensor:
    """``tensor`` (its memory shared) as a :class:`DeviceTensor`."""
    with torch._C.DisableTorchFunction():
        return tensor if isinstance(tensor, DeviceTensor) else tensor.as_subclass(DeviceTensor)


def _on_host(value: Any) -> Any:
    if isinstance(value, DeviceTensor):
        with torch._C.DisableTorchFunction():
            return value.as_subclass(torch.Tensor)
    return value


def _tag(value: Any) -> Any:
    return on_device(value) if isinstance(value, torch.Tensor) else value


def _where(device: Any) -> str | None:
    """``"device"`` for the fake device, ``"host"`` for the CPU, ``None`` for anything that names no device."""
    if isinstance(device, (str, torch.device)):
        kind = torch.device(device).type
        if kind == FAKE_DEVICE.type:
            return "device"
        if kind == "cpu":
            return "host"
        raise DeviceMixError(f"the engine named device {device!r}: it must use the model's device, not its own")
    return None


def _engine_line() -> str:
    """The innermost line of ``tpc_core`` running now (or of its caller, when no engine code is on the stack)."""
    frames = [frame for frame in traceback.extract_stack() if not frame.filename.endswith("fake_device.py")
              and "/torch/" not in frame.filename]
    inside = [frame for frame in frames if "/tpc_core/" in frame.filename]
    frame = (inside or frames)[-1]
    return f"{frame.filename.rsplit('/tpc_core/', 1)[-1]}:{frame.lineno} {frame.line}"


class FakeDevice(TorchFunctionMode):
    """The mode that gives :class:`DeviceTensor` its meaning (see the module docstring).

    Attributes:
        host_copies: The engine line of every device-to-host copy, in order.
    """

    def __init__(self) -> None:
        super().__init__()
        self.host_copies: list[str] = []

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: Mapping[str, Any] | None = None):
        kwargs = dict(kwargs or {})
        if func == _DEVICE_GETTER:
            return FAKE_DEVICE if isinstance(args[0], DeviceTensor) else func(*args)
        name = getattr(func, "__name__", "")
        if name in _FORBIDDEN:
            raise DeviceMixError(f"Tensor.{name}() names a device: the engine must use the model's device")
        flat, _ = tree_flatten((args, kwargs))
        tensors = [value for value in flat if isinstance(value, torch.Tensor)]
        on_the_device = [value for value in tensors if isinstance(value, DeviceTensor)]
        target = self._target(name, args, kwargs)
        if target == "device":  # made on, or moved to, the device: made on the host, then tagged
            if "device" in kwargs:
                kwargs["device"] = "cpu"
            args = tuple("cpu" if _where(value) == "device" else value for value in args) \
                if name == "to" else args
            return tree_map(_tag, func(*tree_map(_on_host, args), **tree_map(_on_host, kwargs)))
        if on_the_device and (target == "host" or name in _READS):
            self.host_copies.append(_engine_line())
            return tree_map(_on_host, func(*tree_map(_on_host, args), **tree_map(_on_host, kwargs)))
        if not on_the_device:
            return func(*args, **kwargs)
        host = [value for value in tensors if not isinstance(value, DeviceTensor) and value.dim() > 0]
        if host and name not in _CROSSING:
            raise DeviceMixError(
                f"{name or func}: expected all tensors to be on the same device, but found a host tensor of shape "
                f"{tuple(host[0].shape)} beside a tensor on {FAKE_DEVICE} (at {_engine_line()})")
        result = func(*args, **kwargs)
        if name in _CROSSING and args and not isinstance(args[0], DeviceTensor):  # copied into a host tensor
            if name != "__getitem__":
                self.host_copies.append(_engine_line())
                return result
        return tree_map(_tag, result)

    @staticmethod
    def _target(name: str, args: tuple, kwargs: Mapping[str, Any]) -> str | None:
        """Where a placing call (``to``, ``cpu``, a factory's ``device=``) puts its result, else ``None``."""
        if "device" in kwargs:
            return _where(kwargs["device"])
        if name == "cpu":
            return "host"
        if name == "to":
            for value in args[1:]:
                if isinstance(value, torch.Tensor):
                    return "device" if isinstance(value, DeviceTensor) else "host"
                where = _where(value)
                if where is not None:
                    return where
        return None


class ModelOnFakeDevice:
    """A real model as if it lived on the fake device: inputs must be device tensors, outputs are.

    Everything else (``config``, ``dtype``, hooks) is the wrapped model's. Its forward pass and ``generate`` run
    on the CPU with the mode switched off, so only the engine's own tensors are checked.

    Args:
        model: A transformers model on the CPU.
    """

    def __init__(self, model: Any) -> None:
        self.__dict__["model"] = model

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["model"], name)

    @property
    def device(self) -> torch.device:
        """Where the engine must put the model's inputs."""
        return FAKE_DEVICE

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._run(self.__dict__["model"], args, kwargs)

    def generate(self, *args: Any, **kwargs: Any) -> Any:
        """The model's ``generate``, with the same input rule."""
        return self._run(self.__dict__["model"].generate, args, kwargs)

    @staticmethod
    def _run(function: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
        flat, _ = tree_flatten((args, kwargs))
        host = [value for value in flat if isinstance(value, torch.Tensor) and not isinstance(value, DeviceTensor)]
        if host:
            raise DeviceMixError(f"the model on {FAKE_DEVICE} was given a host tensor of shape {tuple(host[0].shape)}: "
                                 "move its inputs to the model's device")
        with torch._C.DisableTorchFunction():
            output = function(*tree_map(_on_host, args), **tree_map(_on_host, kwargs))
        if isinstance(output, torch.Tensor):
            return on_device(output)
        if isinstance(output, Mapping):  # a transformers ModelOutput
            for key in list(output.keys()):
                output[key] = tree_map(_tag, output[key])
        return output
