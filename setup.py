"""vllm-humming: JIT-compiled quantized GEMM kernels for LLM inference, shipped as a vLLM plugin.

The CUDA header tree lives at the repository's top-level ``kernels/``; it is installed as package data under
``vllm_humming/_kernels`` so that a non-editable install finds it too (see ``vllm_humming.jit.paths``).
"""

from setuptools import find_packages, setup

setup(
    name="vllm-humming",
    version="0.1.0",
    description="JIT-compiled quantized GEMM kernels (NVRTC) for LLM inference, with a vLLM plugin",
    python_requires=">=3.10",
    packages=find_packages(include=["vllm_humming", "vllm_humming.*"]) + ["vllm_humming._kernels"],
    package_dir={"vllm_humming._kernels": "kernels"},
    package_data={"vllm_humming._kernels": ["*.cuh", "include/humming/*.cuh", "include/humming/**/*.cuh"]},
    install_requires=[
        "torch>=2.6",
        "safetensors",
        "filelock",
        "numpy",
    ],
    extras_require={
        # NVRTC + CUDA headers + driver bindings: needed to compile/launch kernels (not for the CPU fallback).
        "cuda": ["cuda-bindings>=12.8", "cuda-pathfinder", "nvidia-cuda-nvrtc", "nvidia-cuda-runtime",
                 "nvidia-cuda-cccl"],
        "test": ["pytest", "hypothesis"],
    },
    entry_points={
        "console_scripts": ["vllm-humming=vllm_humming.cli:main"],
        "vllm.general_plugins": ["humming=vllm_humming.plugin:register"],
    },
)
