"""The native binary format of value-net weights (torch-free).

The format (``docs/weights_format.md``) is a little-endian header (48 bytes in version 1; 56 in
version 2, which adds a stake-relative output; 64 in version 3, which adds a metadata block
naming the net's game and search), the parameters as float32 little-endian in a fixed order,
the metadata (version 3), and a CRC-32 of everything before it. It holds
no code (unlike pickle) and is what the C++ :class:`rebel._core.MlpValueNet` loads.
Malformed data raises ValueError here exactly as it does in C++.

This module knows the format only and never imports torch (the sanitizer test runs, which
do not load torch, write weights with :func:`weights_from_arrays`); converting a torch
:class:`rebel.nets.value_mlp.ValueMLP` to and from it lives in :mod:`rebel.nets.value_mlp`.
"""
from __future__ import annotations

import json
import struct
import zlib
from dataclasses import dataclass
from typing import Any, List, Mapping, Optional, Sequence

import numpy as np

MAGIC = b"REBELMLP"
VERSION = 3  # the newest version read; a net without metadata is written as version 1 or 2 as before
_HEADER = struct.Struct("<8sIIIIIIfIQ")  # magic, version, header size, in, out, hidden, layers, eps, flags, count
HEADER_SIZE = _HEADER.size  # 48, version 1
_STAKE = struct.Struct("<If")  # version 2: the stake column, the stake scale
HEADER_SIZE_V2 = HEADER_SIZE + _STAKE.size  # 56
FLAG_STAKE_OUTPUT = 1  # version 2's flags: outputs multiplied by in[stake_column] * stake_scale
_V3_TAIL = struct.Struct("<IfII")  # version 3: stake column, stake scale, metadata bytes, reserved (0)
HEADER_SIZE_V3 = HEADER_SIZE + _V3_TAIL.size  # 64
MAX_METADATA_BYTES = 1 << 20
_TRAILER = struct.Struct("<I")  # CRC-32 (zlib.crc32) of header + payload
_MAX_DIM = 1 << 24
_MAX_LAYERS = 64


@dataclass(frozen=True)
class WeightsHeader:
    """The decoded header of a weights file."""

    input_size: int
    output_size: int
    hidden_size: int
    num_layers: int
    layer_norm_eps: float
    payload_floats: int
    stake_column: int = -1  # version 2: each row's outputs times in[stake_column] * stake_scale
    stake_scale: float = 1.0
    metadata_bytes: int = 0  # version 3: the size of the metadata block after the payload

    @property
    def version(self) -> int:
        """1 for a plain net, 2 for a stake-relative one, 3 for a net with metadata."""
        return 3 if self.metadata_bytes else 1 if self.stake_column < 0 else 2

    @property
    def header_size(self) -> int:
        """48 (version 1), 56 (version 2) or 64 (version 3)."""
        return (HEADER_SIZE, HEADER_SIZE_V2, HEADER_SIZE_V3)[self.version - 1]

    def expected_payload_floats(self) -> int:
        """Number of float32 parameters the dimensions imply."""
        total, fan_in = 0, self.input_size
        for _ in range(self.num_layers):
            total += fan_in * self.hidden_size + 3 * self.hidden_size
            fan_in = self.hidden_size
        return total + fan_in * self.output_size + self.output_size

    def file_size(self) -> int:
        """Exact size in bytes of a file with this header."""
        return self.header_size + 4 * self.expected_payload_floats() + self.metadata_bytes + _TRAILER.size


def weights_from_arrays(input_size: int, output_size: int, hidden: int, layers: int,
                        parameters: Sequence[np.ndarray], layer_norm_eps: float = 1e-5,
                        stake_column: int = -1, stake_scale: float = 1.0,
                        metadata: Optional[Mapping[str, Any]] = None) -> bytes:
    """Serialises parameters given as arrays, in file order (no torch needed).

    ``parameters``: per hidden block the Linear weight [hidden, fan_in] and bias [hidden],
    the LayerNorm weight and bias [hidden]; then the head weight [output_size, fan_in] and
    bias [output_size] (fan_in is input_size for the first block, hidden after).
    ``stake_column`` >= 0 writes version 2: every output of a row is multiplied by
    ``row[stake_column] * stake_scale``. ``metadata`` (a JSON-serialisable mapping, see
    :func:`net_metadata`) writes version 3 with it after the payload. Raises ValueError on a
    wrong count, a wrong size, a non-finite value or a stake column that is not an input column.
    """
    if stake_column >= 0 and not (stake_column < input_size and np.isfinite(stake_scale) and stake_scale > 0):
        raise ValueError(f"stake column {stake_column} must be an input column (< {input_size}) with a finite "
                         f"stake scale > 0, got {stake_scale}")
    expected = _parameter_sizes(input_size, output_size, hidden, layers)
    if len(parameters) != len(expected):
        raise ValueError(f"expected {len(expected)} parameter arrays for {layers} hidden layers, got {len(parameters)}")
    arrays = [np.asarray(a, dtype=np.float32).reshape(-1) for a in parameters]
    for i, (a, n) in enumerate(zip(arrays, expected)):
        if a.size != n:
            raise ValueError(f"parameter array {i} has {a.size} values, expected {n}")
    payload = np.concatenate(arrays).astype("<f4", copy=False)
    if not np.all(np.isfinite(payload)):
        raise ValueError("model has non-finite parameters (NaN or inf); refusing to export")
    flags = 0 if stake_column < 0 else FLAG_STAKE_OUTPUT
    if metadata is not None:
        meta = json.dumps(dict(metadata), separators=(",", ":")).encode()  # in the game's parameter order
        if len(meta) > MAX_METADATA_BYTES:
            raise ValueError(f"net metadata of {len(meta)} bytes; at most {MAX_METADATA_BYTES}")
        head = _HEADER.pack(MAGIC, 3, HEADER_SIZE_V3, input_size, output_size, hidden, layers, layer_norm_eps,
                            flags, payload.size) + _V3_TAIL.pack(max(stake_column, 0), stake_scale, len(meta), 0)
        body = head + payload.tobytes() + meta
    elif stake_column < 0:
        head = _HEADER.pack(MAGIC, 1, HEADER_SIZE, input_size, output_size, hidden, layers, layer_norm_eps, 0,
                            payload.size)
        body = head + payload.tobytes()
    else:
        head = _HEADER.pack(MAGIC, 2, HEADER_SIZE_V2, input_size, output_size, hidden, layers, layer_norm_eps,
                            FLAG_STAKE_OUTPUT, payload.size) + _STAKE.pack(stake_column, stake_scale)
        body = head + payload.tobytes()
    return body + _TRAILER.pack(zlib.crc32(body))


def read_header(data: bytes) -> WeightsHeader:
    """Decodes and validates the header and overall size of ``data`` (ValueError if bad)."""
    if len(data) < len(MAGIC) or data[: len(MAGIC)] != MAGIC:
        raise ValueError(f"not an MLP weights file: bad magic (expected {MAGIC!r} in the first 8 bytes)")
    if len(data) < HEADER_SIZE:
        raise ValueError(f"MLP weights file truncated: {len(data)} bytes, the header alone is {HEADER_SIZE}")
    _, version, header_size, n_in, n_out, hidden, layers, eps, flags, count = _HEADER.unpack_from(data)
    if not 1 <= version <= VERSION:
        raise ValueError(f"unsupported MLP weights format version {version} (this reads versions 1 to {VERSION})")
    expected_size = (HEADER_SIZE, HEADER_SIZE_V2, HEADER_SIZE_V3)[version - 1]
    flags_ok = flags == 0 if version == 1 else flags == FLAG_STAKE_OUTPUT if version == 2 \
        else flags & ~FLAG_STAKE_OUTPUT == 0
    if header_size != expected_size or not flags_ok:
        raise ValueError(f"MLP weights: unsupported header for version {version} (size {header_size}, flags {flags})")
    if len(data) < expected_size:
        raise ValueError(f"MLP weights file truncated: {len(data)} bytes, the header alone is {expected_size}")
    stake_column, stake_scale, metadata_bytes = -1, 1.0, 0
    if version == 3:
        column, scale, metadata_bytes, reserved = _V3_TAIL.unpack_from(data, HEADER_SIZE)
        if metadata_bytes > MAX_METADATA_BYTES or reserved != 0:
            raise ValueError(f"MLP weights: metadata of {metadata_bytes} bytes (at most {MAX_METADATA_BYTES}) "
                             "or a nonzero reserved field")
        if metadata_bytes == 0:
            raise ValueError("MLP weights: version 3 with an empty metadata block")
    if flags & FLAG_STAKE_OUTPUT:
        stake_column, stake_scale = _STAKE.unpack_from(data, HEADER_SIZE)
        if stake_column >= n_in:
            raise ValueError(f"MLP weights: stake column {stake_column} is not an input column (input {n_in})")
        if not (np.isfinite(stake_scale) and stake_scale > 0):
            raise ValueError(f"MLP weights: stake scale must be finite and > 0, got {stake_scale}")
    if not (1 <= n_in <= _MAX_DIM and 1 <= n_out <= _MAX_DIM and hidden <= _MAX_DIM and layers <= _MAX_LAYERS
            and (layers == 0 or hidden >= 1)):
        raise ValueError(f"MLP weights: invalid dimensions (input {n_in}, output {n_out}, hidden {hidden}, "
                         f"layers {layers})")
    if not (np.isfinite(eps) and eps > 0):
        raise ValueError(f"MLP weights: layer norm eps must be finite and > 0, got {eps}")
    header = WeightsHeader(n_in, n_out, hidden, layers, float(eps), count, int(stake_column), float(stake_scale),
                           int(metadata_bytes))
    if count != header.expected_payload_floats():
        raise ValueError(f"MLP weights: header says {count} payload floats but its dimensions need "
                         f"{header.expected_payload_floats()}")
    if len(data) < header.file_size():
        raise ValueError(f"MLP weights file truncated: {len(data)} bytes, expected {header.file_size()}")
    if len(data) > header.file_size():
        raise ValueError(f"MLP weights file has {len(data) - header.file_size()} unexpected trailing bytes")
    return header


def check_policy_shape(input_size: int, output_size: int, game: Any, stake_column: int = -1) -> None:
    """ValueError unless a net of these sizes is a policy net of ``game`` (input
    ``game.query_size``, output ``num_hands * num_actions``, laid out [hand][action], no stake
    column); the message says what the file looks like instead (a value net's output is
    ``num_hands``; a stake column makes it a stake-relative value net)."""
    if stake_column >= 0:
        raise ValueError("these weights scale their outputs by a stake column: a stake-relative value net, "
                         "not a policy net")
    q, h, a = int(game.query_size), int(game.num_hands), int(game.num_actions)
    if input_size == q and output_size == h * a:
        return
    if input_size == q and output_size == h:
        raise ValueError(f"these weights look like a value net of {game.description()} (output {output_size} = "
                         f"num_hands), not a policy net (output num_hands x num_actions = {h} x {a} = {h * a})")
    raise ValueError(f"these weights (input {input_size}, output {output_size}) do not fit a policy net of "
                     f"{game.description()}: it needs input query_size = {q} and output num_hands x num_actions "
                     f"= {h} x {a} = {h * a}")


def read_policy_weights(data: bytes, game: Any) -> bytes:
    """``data`` if it is a valid policy-net weights file for ``game`` (ValueError otherwise)."""
    header, _ = payload_from_bytes(data)
    check_policy_shape(header.input_size, header.output_size, game, header.stake_column)
    return bytes(data)


def payload_from_bytes(data: bytes) -> tuple[WeightsHeader, np.ndarray]:
    """Validates serialised weights (header, CRC-32, finite values) and returns the header and
    the parameters as one float32 array in file order (ValueError if anything is wrong)."""
    data = bytes(data)
    header = read_header(data)
    body_size = len(data) - _TRAILER.size
    (stored_crc,) = _TRAILER.unpack_from(data, body_size)
    if zlib.crc32(data[:body_size]) != stored_crc:
        raise ValueError("MLP weights file corrupted: CRC-32 checksum mismatch")
    payload = np.frombuffer(data, dtype="<f4", count=header.payload_floats, offset=header.header_size)
    if not np.all(np.isfinite(payload)):
        raise ValueError("MLP weights: payload contains non-finite values")
    return header, payload.astype(np.float32)


def average_weights(files: Sequence[bytes]) -> bytes:
    """The uniform average of several nets of one architecture, parameter by parameter (a
    Polyak average of snapshots: the nets must share input, output, hidden and layer sizes
    and the LayerNorm eps). Each file is validated as :func:`payload_from_bytes` does; the
    mean is taken in float64 and stored as float32. ValueError on no input or a mismatch."""
    if len(files) == 0:
        raise ValueError("average_weights: no weights to average")
    first, total = payload_from_bytes(files[0])
    metadata = read_metadata(files[0])
    total = total.astype(np.float64)
    for i, data in enumerate(files[1:], start=1):
        header, payload = payload_from_bytes(data)
        if _architecture(header) != _architecture(first):
            raise ValueError(f"average_weights: net {i} has another architecture ({header}) than net 0 ({first})")
        if read_metadata(data) != metadata:
            raise ValueError(f"average_weights: net {i} names another game or search than net 0")
        total += payload
    return weights_from_arrays(first.input_size, first.output_size, first.hidden_size, first.num_layers,
                               _split(total / len(files), first), first.layer_norm_eps,
                               first.stake_column, first.stake_scale, metadata)


def _architecture(header: WeightsHeader) -> tuple[Any, ...]:
    """What two nets must share to be averaged (everything but the metadata's size)."""
    return (header.input_size, header.output_size, header.hidden_size, header.num_layers, header.layer_norm_eps,
            header.stake_column, header.stake_scale)


def read_metadata(data: bytes) -> Optional[dict[str, Any]]:
    """The metadata a version-3 weights file carries (None for versions 1 and 2): a JSON object,
    see :func:`net_metadata`. The header is validated; ValueError if the block is not a JSON object."""
    header = read_header(bytes(data))
    if not header.metadata_bytes:
        return None
    start = header.header_size + 4 * header.payload_floats
    try:
        meta = json.loads(bytes(data[start: start + header.metadata_bytes]).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"MLP weights: the metadata block is not UTF-8 JSON ({e})") from None
    if not isinstance(meta, dict):
        raise ValueError("MLP weights: the metadata block is not a JSON object")
    return meta


#: The search settings a net's metadata records (the settings it was trained and measured with).
SEARCH_KEYS = ("solver", "depth", "iterations", "chance_leaves")


def net_metadata(kind: str, game: Mapping[str, Any], search: Mapping[str, Any]) -> dict[str, Any]:
    """The metadata block of a net: ``kind`` ("value" or "policy"), its game (``{"name": ...,
    params}`` with every parameter, as :meth:`rebel.config.common.GameSection.as_dict` gives)
    and the search it was trained with (:data:`SEARCH_KEYS`)."""
    if kind not in ("value", "policy"):
        raise ValueError(f"net kind must be value or policy, got {kind!r}")
    return {"kind": kind, "game": dict(game), "search": {k: search[k] for k in SEARCH_KEYS if k in search}}


def with_metadata(data: bytes, metadata: Mapping[str, Any]) -> bytes:
    """The same net (validated, parameters bit for bit) written as version 3 with ``metadata``:
    how a file from before version 3 is made to name its game and search."""
    header, payload = payload_from_bytes(data)
    return weights_from_arrays(header.input_size, header.output_size, header.hidden_size, header.num_layers,
                               _split(payload, header), header.layer_norm_eps, header.stake_column,
                               header.stake_scale, metadata)


def read_net_metadata(path: str) -> Optional[dict[str, Any]]:
    """The metadata of the weights file at ``path`` (None if it predates version 3).
    OSError if unreadable, ValueError if malformed."""
    with open(path, "rb") as f:
        return read_metadata(f.read())


def _split(payload: np.ndarray, header: WeightsHeader) -> List[np.ndarray]:
    """A flat payload cut into the per-parameter arrays of :func:`weights_from_arrays`."""
    sizes = _parameter_sizes(header.input_size, header.output_size, header.hidden_size, header.num_layers)
    return np.split(payload, np.cumsum(sizes)[:-1])


def _parameter_sizes(input_size: int, output_size: int, hidden: int, layers: int) -> List[int]:
    """The number of values of each parameter array, in file order."""
    sizes: List[int] = []
    fan_in = input_size
    for _ in range(layers):
        sizes += [hidden * fan_in, hidden, hidden, hidden]
        fan_in = hidden
    return sizes + [output_size * fan_in, output_size]
