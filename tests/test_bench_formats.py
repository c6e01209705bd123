"""Bench option parsing and the format table (CPU only)."""

from __future__ import annotations

import argparse

import pytest

from vllm_humming.bench.formats import (DEFAULT_MS, DEFAULT_SHAPES, FORMAT_GROUPS, FORMATS, QUICK_MS, BenchArgError,
                                        parse_formats, parse_ms, parse_shapes, shape_str)
from vllm_humming.bench.peers import UPSTREAM_CONFIGS
from vllm_humming.commands import bench as cmd
from vllm_humming.desc import WeightDesc

REQUIRED = ["w4a16-int4-g128", "w3a16-int3-g128", "w2a16-int2-g64", "w8a16-int8-channel", "w4a16-mxfp4",
            "w4a16-nvfp4", "w4a16-int4-g128-zp", "w8a16-fp8-channel", "w8a16-fp8-block", "w4a8-int4-g128-fp8",
            "w4a8-mxfp4-fp8", "w8a8-fp8", "w8a8-int8"]


def test_required_formats_present_with_expected_descriptions():
    assert set(REQUIRED) <= set(FORMATS)
    w = {n: str(FORMATS[n].weight_desc) for n in REQUIRED}
    a = {n: str(FORMATS[n].act_desc) for n in REQUIRED}
    assert w["w4a16-int4-g128"] == "w:uint4b8,s:g128:bfloat16"
    assert w["w2a16-int2-g64"].endswith("s:g64:bfloat16")
    assert w["w4a16-int4-g128-zp"] == "w:uint4,s:g128:bfloat16,zp:int"
    assert w["w4a16-mxfp4"] == str(WeightDesc.parse("mxfp4"))
    assert "s2:tensor:float32" in w["w4a16-nvfp4"]
    assert "b128x128" in w["w8a16-fp8-block"]
    assert w["w8a16-int8-channel"].startswith("w:uint8b128,s:channel")
    for n in ("w4a8-int4-g128-fp8", "w4a8-mxfp4-fp8", "w8a8-fp8"):
        assert a[n].startswith("a:float8_e4m3fn,s:token")
    assert a["w8a8-int8"].startswith("a:int8,s:token")
    for n in REQUIRED[:9]:
        assert a[n] == "a:bfloat16"


def test_groups_partition_the_table():
    assert FORMAT_GROUPS["all"] == list(FORMATS)
    assert set(FORMAT_GROUPS["act"]) == {"w4a8-int4-g128-fp8", "w4a8-mxfp4-fp8", "w8a8-fp8", "w8a8-int8"}
    assert set(FORMAT_GROUPS["wna16"]) | set(FORMAT_GROUPS["act"]) == set(FORMATS)
    assert not set(FORMAT_GROUPS["wna16"]) & set(FORMAT_GROUPS["act"])


def test_every_format_has_an_upstream_configuration():
    assert set(UPSTREAM_CONFIGS) == set(FORMATS)
    for name, (wcfg, icfg) in UPSTREAM_CONFIGS.items():
        assert "b_dtype" in wcfg
        # activation-quantized formats, and only those, carry an upstream input config
        assert (icfg is not None) == FORMATS[name].act_quantized, name


def test_parse_formats_order_dedupe_groups_case():
    fs = parse_formats("W8A8-int8, w4a16-int4-g128,w8a8-int8")
    assert [f.name for f in fs] == ["w8a8-int8", "w4a16-int4-g128"]
    assert [f.name for f in parse_formats("act")] == FORMAT_GROUPS["act"]
    assert len(parse_formats("all,wna16")) == len(FORMATS)


def test_parse_formats_unknown_names_known_ones():
    with pytest.raises(BenchArgError) as ei:
        parse_formats("w4a16-int4-g128,w5a16")
    msg = str(ei.value)
    assert "'w5a16'" in msg and "w4a16-mxfp4" in msg and "wna16" in msg
    with pytest.raises(BenchArgError):
        parse_formats(" , ")


def test_parse_shapes():
    assert parse_shapes("6144x4096, 28672X4096") == [(6144, 4096), (28672, 4096)]
    assert parse_shapes("64x64,64x64") == [(64, 64)]
    assert shape_str((4096, 14336)) == "4096x14336"
    for bad in ("6144", "6144x", "ax4", "0x128", "1x2x3", ""):
        with pytest.raises(BenchArgError):
            parse_shapes(bad)


def test_parse_ms():
    assert parse_ms("1,16, 64,16") == [1, 16, 64]
    for bad in ("0", "-1", "1.5", "x", ""):
        with pytest.raises(BenchArgError):
            parse_ms(bad)


def _args(*argv):
    p = argparse.ArgumentParser()
    cmd.add_arguments(p)
    return p.parse_args(list(argv))


def test_cli_defaults_match_the_method():
    cfg = cmd.build_config(_args())
    assert [f.name for f in cfg.formats] == list(FORMATS)
    assert cfg.shapes == list(DEFAULT_SHAPES) == [(6144, 4096), (28672, 4096), (4096, 14336)]
    assert cfg.ms == list(DEFAULT_MS) == [1, 16, 64, 256, 1024, 4096]
    assert cfg.replays == 20 and cfg.min_bytes == 512 * 2**20
    assert cfg.upstream and cfg.eager and cfg.cold and cfg.check
    assert not cfg.cold_upstream      # upstream's cold compile is opt-in (--cold all): ~15 s per format


def test_cli_cold_choices():
    assert cmd.build_config(_args("--cold", "all")).cold_upstream
    assert cmd.build_config(_args("--cold", "all")).cold
    assert not cmd.build_config(_args("--cold", "none")).cold
    assert not cmd.build_config(_args("--no-cold")).cold
    with pytest.raises(SystemExit):
        _args("--cold", "upstream")


def test_cli_options():
    cfg = cmd.build_config(_args("--formats", "act", "--shapes", "128x256", "--ms", "1,2", "--replays", "25",
                                 "--min-bytes", "1G", "--no-upstream", "--no-eager", "--no-cold", "--no-check",
                                 "--eager-calls", "3", "--seed", "7"))
    assert [f.name for f in cfg.formats] == FORMAT_GROUPS["act"]
    assert cfg.shapes == [(128, 256)] and cfg.ms == [1, 2] and cfg.replays == 25
    assert cfg.min_bytes == 2**30
    assert not (cfg.upstream or cfg.eager or cfg.cold or cfg.check)
    assert cfg.eager_calls == 3 and cfg.seed == 7


def test_cli_quick_keeps_method_but_fewer_ms_and_no_cold():
    cfg = cmd.build_config(_args("--quick"))
    assert cfg.ms == list(QUICK_MS) and not cfg.cold
    assert cfg.replays == 20 and cfg.min_bytes == 512 * 2**20
    assert cmd.build_config(_args("--quick", "--ms", "4")).ms == [4]


@pytest.mark.parametrize("text,value", [("512M", 512 * 2**20), ("512MiB", 512 * 2**20), ("512MB", 512 * 2**20),
                                        ("1g", 2**30), ("64k", 64 * 1024), ("1000", 1000), ("0", 0)])
def test_min_bytes_units(text, value):
    assert cmd._bytes(text) == value


@pytest.mark.parametrize("argv", [["--replays", "0"], ["--min-bytes", "lots"], ["--min-bytes", "-5"],
                                  ["--eager-calls", "0"]])
def test_cli_rejects_bad_numbers(argv, capsys):
    with pytest.raises(SystemExit):
        _args(*argv)


def test_run_without_cuda_is_a_clear_error(capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this checks the CPU-only message")
    rc = cmd.run(_args("--formats", "w4a16-int4-g128"))
    assert rc == 2
    assert "no CUDA device" in capsys.readouterr().err


def test_run_bad_format_returns_2(capsys):
    assert cmd.run(_args("--formats", "nonsense")) == 2
    assert "unknown bench format" in capsys.readouterr().err


def test_cli_dispatches_bench(capsys):
    from vllm_humming import cli

    with pytest.raises(SystemExit) as ei:
        cli.main(["bench", "--help"])
    assert ei.value.code == 0
    out = capsys.readouterr().out
    assert "--min-bytes" in out and "--no-upstream" in out and "--json" in out and "--quick" in out
