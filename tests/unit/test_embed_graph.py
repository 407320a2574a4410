"""The exact graph edit made before onnxruntime loads an encoder: the exporter's NaN guards
(``Where(IsNaN(p), 0, p)``) go, and nothing else does."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from truthbase.embed._graph import drop_nan_guards, loadable_model


def _guarded_softmax(
    then_value: float | np.ndarray = 0.0,
    output: str | None = None,
    twice: bool = False,
) -> onnx.ModelProto:
    """x -> Softmax -> Where(IsNaN(p), then_value, p) [-> the same guard again] -> Mul by 2 -> y,
    with ``output`` (a name inside) a graph output too."""
    nodes = [
        helper.make_node("Softmax", ["x"], ["p"], axis=-1),
        helper.make_node("IsNaN", ["p"], ["nan"]),
        helper.make_node("Where", ["nan", "fill", "p"], ["guarded"]),
    ]
    if twice:
        nodes += [
            helper.make_node("IsNaN", ["guarded"], ["nan2"]),
            helper.make_node("Where", ["nan2", "fill", "guarded"], ["guarded2"]),
        ]
    nodes.append(helper.make_node("Mul", ["guarded2" if twice else "guarded", "two"], ["y"]))
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])]
    if output is not None:
        element = TensorProto.BOOL if output == "nan" else TensorProto.FLOAT
        outputs.append(helper.make_tensor_value_info(output, element, [2, 3]))
    graph = helper.make_graph(
        nodes,
        "guarded",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        outputs,
        initializer=[
            numpy_helper.from_array(np.asarray(then_value, dtype=np.float32), "fill"),
            numpy_helper.from_array(np.array(2.0, dtype=np.float32), "two"),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _run(model: onnx.ModelProto | bytes, x: np.ndarray) -> np.ndarray:
    data = model if isinstance(model, bytes) else model.SerializeToString()
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    result: np.ndarray = session.run(["y"], {"x": x})[0]
    return result


def test_a_zero_guard_goes_and_the_output_is_the_same() -> None:
    x = np.array([[1.0, 2.0, 3.0], [0.0, -1.0, 5.0]], dtype=np.float32)
    model = _guarded_softmax()
    before = _run(model, x)
    assert drop_nan_guards(model) == 1
    assert [node.op_type for node in model.graph.node] == ["Softmax", "Mul"]
    assert list(model.graph.node[1].input) == ["p", "two"]
    assert np.array_equal(_run(model, x), before)


def test_a_guard_that_fills_another_value_or_shape_or_is_an_output_stays() -> None:
    for model in (
        _guarded_softmax(1.0),
        _guarded_softmax(np.zeros((1, 1, 1))),  # would broadcast y to three dimensions
        _guarded_softmax(output="guarded"),
        _guarded_softmax(output="nan"),
    ):
        assert drop_nan_guards(model) == 0
        assert [node.op_type for node in model.graph.node] == ["Softmax", "IsNaN", "Where", "Mul"]


def test_a_guard_of_a_guard_goes_to_the_first_value() -> None:
    x = np.array([[1.0, 2.0, 3.0], [0.0, -1.0, 5.0]], dtype=np.float32)
    model = _guarded_softmax(twice=True)
    before = _run(model, x)
    assert drop_nan_guards(model) == 2
    assert list(model.graph.node[-1].input) == ["p", "two"]
    assert np.array_equal(_run(model, x), before)


def test_a_graph_with_a_subgraph_is_left_whole() -> None:
    model = _guarded_softmax()
    branch = helper.make_graph(
        [helper.make_node("Identity", ["guarded"], ["out"])],
        "branch",
        [],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [2, 3])],
    )
    model.graph.node.append(
        helper.make_node("If", ["flag"], ["chosen"], then_branch=branch, else_branch=branch)
    )
    assert drop_nan_guards(model) == 0
    assert len(model.graph.node) == 5


def test_a_file_that_is_no_model_is_loaded_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "model.onnx"
    path.write_bytes(b"not an onnx graph")
    with loadable_model(path) as loadable:
        assert loadable == path


def test_a_model_without_guards_is_loaded_from_its_path(tmp_path: Path) -> None:
    model = _guarded_softmax(0.0)
    drop_nan_guards(model)
    path = tmp_path / "model.onnx"
    onnx.save(model, str(path))
    with loadable_model(path) as loadable:
        assert loadable == path
    onnx.save(_guarded_softmax(0.0), str(path))
    with loadable_model(path) as loadable:
        assert loadable != path
        edited = onnx.load(str(loadable))
    assert "IsNaN" not in {node.op_type for node in edited.graph.node}
    assert not loadable.exists() and path.exists()
