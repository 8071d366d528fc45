"""The GPUs learners meet, as data (chapter 10): datasheet figures, each row naming its `source`.

A figure that no vendor datasheet, whitepaper or published review gives is `None`, never a guess.
Tensor-core peaks are **dense**: from the A100 on, NVIDIA's datasheets print the 2:4-sparse figure,
exactly twice the dense one, and ordinary PyTorch matmuls are dense, so the table holds half the
printed figure. For GeForce cards it holds the whitepapers' figure "with FP32 accumulate", which is
what PyTorch's FP16/BF16 matmuls use. NVIDIA publishes no list prices for its data-centre GPUs, and
prices move: a launch price says little about what a card, or an hour of a cloud GPU, costs today.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GpuSpec:
    """One GPU's datasheet figures (dense peaks) and their source."""

    name: str  # the product as sold, e.g. "NVIDIA T4"
    short: str  # a short label for plots and widgets, e.g. "T4"
    architecture: str
    year: int  # year of launch
    fp32_tflops: float  # on the ordinary CUDA cores (no tensor cores, no TF32)
    fp16_tensor_tflops: float | None  # dense; None: no FP16 tensor cores (the P100's FP16 is in `notes`)
    bf16_tensor_tflops: float | None  # dense; None: no BF16 hardware
    memory_gb: float  # 10^9 bytes, as sold
    memory_type: str
    bandwidth_gbs: float  # 10^9 bytes per second
    power_w: float  # board power / TDP as the datasheet states it
    source: str
    launch_price_usd: float | None = None  # launch list price (MSRP)
    price_source: str | None = None  # dates the price (month and year of launch)
    notes: str = ""
    device_names: tuple[str, ...] = ()  # lower-case fragments of torch.cuda.get_device_name() for this product
    bus_width_bits: int | None = None  # × data_rate_gbps / 8 = bandwidth: 256 × 10 / 8 = 320 GB/s on a T4
    data_rate_gbps: float | None = None  # per pin; None where no document prints it
    pcie_generation: int | None = None  # the host link, x16 on every card here
    nvlink_gbs: float | None = None  # GPU-to-GPU, both directions added, as datasheets print it; None: no NVLink
    #: The formats the tensor cores multiply in hardware, newest first; others run slowly or on the CUDA cores.
    tensor_formats: tuple[str, ...] = ()

    @property
    def tensor_tflops(self) -> float | None:
        """The best dense 16-bit matrix peak (FP16 or BF16), or None without tensor cores."""
        return max((v for v in (self.fp16_tensor_tflops, self.bf16_tensor_tflops) if v is not None), default=None)

    def peak_tflops(self, precision: str) -> float | None:
        """Peak dense TFLOP/s for `precision`: "fp32", "fp16" (tensor cores) or "bf16" (tensor cores)."""
        key = precision.lower().replace("bfloat16", "bf16").replace("float", "fp")
        table = {"fp32": self.fp32_tflops, "fp16": self.fp16_tensor_tflops, "bf16": self.bf16_tensor_tflops}
        return table[key]


#: Checked against the documents each row names and third-party spec summaries (docs/sources.md §4: T4, P100).
GPUS: tuple[GpuSpec, ...] = (
    GpuSpec(
        name="NVIDIA Tesla P100 PCIe 16 GB",
        short="P100",
        architecture="Pascal",
        year=2016,
        fp32_tflops=9.3,
        fp16_tensor_tflops=None,
        bf16_tensor_tflops=None,
        memory_gb=16,
        memory_type="HBM2",
        bandwidth_gbs=732,
        power_w=250,
        source="NVIDIA datasheet 'Tesla P100 PCIe' (2016); P100 for NVLink servers: 10.6 TFLOP/s FP32, 300 W; "
        "'Pascal GP100' whitepaper (4096-bit HBM2)",
        notes="No tensor cores: FP16 runs at 18.7 TFLOP/s as packed math on the CUDA cores. Retired on "
        "Kaggle, and recent PyTorch builds no longer ship kernels for its sm_60.",
        device_names=("p100",),
        bus_width_bits=4096,
        pcie_generation=3,
    ),
    GpuSpec(
        name="NVIDIA Tesla V100 SXM2",
        short="V100",
        architecture="Volta",
        year=2017,
        fp32_tflops=15.7,
        fp16_tensor_tflops=125,
        bf16_tensor_tflops=None,
        memory_gb=16,
        memory_type="HBM2",
        bandwidth_gbs=900,
        power_w=300,
        source="NVIDIA datasheet 'Tesla V100' (SXM2 column; 16 or 32 GB); "
        "developer.nvidia.com 'Programming Tensor Cores in CUDA 9' (125 tensor TFLOP/s); 'Volta GV100' "
        "whitepaper (4096-bit HBM2, NVLink 300 GB/s)",
        notes="The PCIe card: 14 TFLOP/s FP32, 112 tensor TFLOP/s, 250 W. First tensor cores (FP16 only).",
        device_names=("v100-sxm2", "v100 sxm2"),
        bus_width_bits=4096,
        pcie_generation=3,
        nvlink_gbs=300,
        tensor_formats=("fp16",),
    ),
    GpuSpec(
        name="NVIDIA T4",
        short="T4",
        architecture="Turing",
        year=2018,
        fp32_tflops=8.1,
        fp16_tensor_tflops=65,
        bf16_tensor_tflops=None,
        memory_gb=16,
        memory_type="GDDR6",
        bandwidth_gbs=320,
        power_w=70,
        source="NVIDIA datasheet 'NVIDIA T4 Tensor Core GPU' (8.1 FP32, 65 FP16/FP32 mixed precision, "
        "320+ GB/s, 70 W, PCIe Gen3 x16); 256-bit GDDR6 at 10 Gbit/s from third-party spec summaries; "
        "docs/sources.md §4",
        notes="Kaggle's GPU (two of them: 'GPU T4 ×2'). No BF16: PyTorch emulates it slowly.",
        device_names=("tesla t4", "nvidia t4"),
        bus_width_bits=256,
        data_rate_gbps=10,
        pcie_generation=3,
        tensor_formats=("fp16",),
    ),
    GpuSpec(
        name="NVIDIA A100 80GB SXM",
        short="A100",
        architecture="Ampere",
        year=2020,
        fp32_tflops=19.5,
        fp16_tensor_tflops=312,
        bf16_tensor_tflops=312,
        memory_gb=80,
        memory_type="HBM2e",
        bandwidth_gbs=2039,
        power_w=400,
        source="NVIDIA datasheet 'NVIDIA A100 Tensor Core GPU' (80GB SXM column; 624 FP16/BF16 shown "
        "with sparsity; NVLink 600 GB/s, PCIe Gen4); 'NVIDIA A100 Tensor Core GPU Architecture' "
        "whitepaper (5120-bit HBM2e)",
        notes="The 40 GB versions have 1,555 GB/s; the PCIe cards 250-300 W. TF32 tensor: 156 TFLOP/s dense.",
        device_names=("a100-sxm4-80gb", "a100 80gb sxm", "a100-sxm-80gb"),
        bus_width_bits=5120,
        pcie_generation=4,
        nvlink_gbs=600,
        tensor_formats=("tf32", "bf16", "fp16"),
    ),
    GpuSpec(
        name="NVIDIA GeForce RTX 3080",
        short="RTX 3080",
        architecture="Ampere",
        year=2020,
        fp32_tflops=29.8,
        fp16_tensor_tflops=59.5,
        bf16_tensor_tflops=59.5,
        memory_gb=10,
        memory_type="GDDR6X",
        bandwidth_gbs=760,
        power_w=320,
        source="NVIDIA 'Ampere GA102 GPU Architecture' whitepaper (RTX 3080 column; FP16/BF16 tensor with "
        "FP32 accumulate, dense; 320-bit GDDR6X at 19 Gbit/s); Tom's Hardware RTX 4080 review table (29.8 FP32)",
        launch_price_usd=699,
        price_source="launch price, September 2020 (Tom's Guide RTX 4090 article, spec table)",
        notes="Consumer card: the tensor rate with FP16 accumulate is twice the FP32-accumulate figure.",
        device_names=("rtx 3080",),
        bus_width_bits=320,
        data_rate_gbps=19,
        pcie_generation=4,
        tensor_formats=("tf32", "bf16", "fp16"),
    ),
    GpuSpec(
        name="NVIDIA GeForce RTX 3090",
        short="RTX 3090",
        architecture="Ampere",
        year=2020,
        fp32_tflops=35.6,
        fp16_tensor_tflops=71,
        bf16_tensor_tflops=71,
        memory_gb=24,
        memory_type="GDDR6X",
        bandwidth_gbs=936,
        power_w=350,
        source="NVIDIA 'Ampere GA102 GPU Architecture' whitepaper (RTX 3090 column; FP16/BF16 tensor with "
        "FP32 accumulate, dense; 384-bit GDDR6X at 19.5 Gbit/s; NVLink bridge 112.5 GB/s)",
        launch_price_usd=1499,
        price_source="launch price, September 2020 (Tom's Guide and Tom's Hardware launch coverage)",
        device_names=("rtx 3090",),
        bus_width_bits=384,
        data_rate_gbps=19.5,
        pcie_generation=4,
        nvlink_gbs=112.5,
        tensor_formats=("tf32", "bf16", "fp16"),
    ),
    GpuSpec(
        name="NVIDIA GeForce RTX 4080",
        short="RTX 4080",
        architecture="Ada Lovelace",
        year=2022,
        fp32_tflops=48.7,
        fp16_tensor_tflops=97.5,
        bf16_tensor_tflops=97.5,
        memory_gb=16,
        memory_type="GDDR6X",
        bandwidth_gbs=716.8,
        power_w=320,
        source="NVIDIA 'Ada GPU Architecture' whitepaper (RTX 4080 column; FP16/BF16 tensor with FP32 "
        "accumulate, dense; 256-bit GDDR6X at 22.4 Gbit/s); Tom's Hardware RTX 4080 review, 2022-11-15 "
        "(48.7 FP32, 717 GB/s)",
        launch_price_usd=1199,
        price_source="launch price, November 2022 (Tom's Hardware RTX 4080 review)",
        device_names=("rtx 4080",),
        bus_width_bits=256,
        data_rate_gbps=22.4,
        pcie_generation=4,
        tensor_formats=("fp8", "tf32", "bf16", "fp16"),
    ),
    GpuSpec(
        name="NVIDIA GeForce RTX 4090",
        short="RTX 4090",
        architecture="Ada Lovelace",
        year=2022,
        fp32_tflops=82.6,
        fp16_tensor_tflops=165.2,
        bf16_tensor_tflops=165.2,
        memory_gb=24,
        memory_type="GDDR6X",
        bandwidth_gbs=1008,
        power_w=450,
        source="NVIDIA 'Ada GPU Architecture' whitepaper (RTX 4090 column; FP16/BF16 tensor with FP32 "
        "accumulate, dense; 384-bit GDDR6X at 21 Gbit/s); Tom's Hardware RTX 4090 review, 2022-10-11 "
        "(82.6 FP32, 1008 GB/s)",
        launch_price_usd=1599,
        price_source="launch price, October 2022 (Tom's Hardware RTX 4090 review; Tom's Guide)",
        device_names=("rtx 4090",),
        bus_width_bits=384,
        data_rate_gbps=21,
        pcie_generation=4,
        tensor_formats=("fp8", "tf32", "bf16", "fp16"),
    ),
    GpuSpec(
        name="NVIDIA H100 SXM",
        short="H100",
        architecture="Hopper",
        year=2022,
        fp32_tflops=67,
        fp16_tensor_tflops=989,
        bf16_tensor_tflops=989,
        memory_gb=80,
        memory_type="HBM3",
        bandwidth_gbs=3350,
        power_w=700,
        source="NVIDIA datasheet 'NVIDIA H100 Tensor Core GPU' (SXM column; 1,979 FP16/BF16 shown with "
        "sparsity, halved here; NVLink 900 GB/s, PCIe Gen5); 'NVIDIA H100 Tensor Core GPU Architecture' "
        "whitepaper (5120-bit HBM3)",
        notes="The PCIe card and the H100 NVL are rows of their own.",
        device_names=("h100 80gb hbm3", "h100 sxm", "h100-sxm"),
        bus_width_bits=5120,
        pcie_generation=5,
        nvlink_gbs=900,
        tensor_formats=("fp8", "tf32", "bf16", "fp16"),
    ),
    GpuSpec(
        name="NVIDIA H100 PCIe",
        short="H100 PCIe",
        architecture="Hopper",
        year=2022,
        fp32_tflops=51,
        fp16_tensor_tflops=756,
        bf16_tensor_tflops=756,
        memory_gb=80,
        memory_type="HBM2e",
        bandwidth_gbs=2000,
        power_w=350,
        source="NVIDIA datasheet 'NVIDIA H100 Tensor Core GPU' (PCIe column; 1,513 FP16/BF16 shown with "
        "sparsity, halved here; 5120-bit HBM2e; NVLink bridge 600 GB/s, PCIe Gen5 128 GB/s); "
        "product brief PB-11133-001 (350 W); docs/sources.md §4",
        notes="Same chip as the SXM module with fewer SMs, slower memory and half the power: 300-350 W.",
        device_names=("h100 pcie",),
        bus_width_bits=5120,
        pcie_generation=5,
        nvlink_gbs=600,
        tensor_formats=("fp8", "tf32", "bf16", "fp16"),
    ),
    GpuSpec(
        name="NVIDIA H100 NVL",
        short="H100 NVL",
        architecture="Hopper",
        year=2023,
        fp32_tflops=60,
        fp16_tensor_tflops=835,
        bf16_tensor_tflops=835,
        memory_gb=94,
        memory_type="HBM3",
        bandwidth_gbs=3900,
        power_w=400,
        source="NVIDIA datasheet 'NVIDIA H100 Tensor Core GPU' (H100 NVL column, 2023; 1,671 FP16/BF16 "
        "shown with sparsity, halved here; NVLink 600 GB/s, PCIe Gen5 128 GB/s); docs/sources.md §4",
        notes="A PCIe card sold in NVLink-bridged pairs for inference of large language models; 350-400 W.",
        device_names=("h100 nvl",),
        pcie_generation=5,
        nvlink_gbs=600,
        tensor_formats=("fp8", "tf32", "bf16", "fp16"),
    ),
    GpuSpec(
        name="NVIDIA L4",
        short="L4",
        architecture="Ada Lovelace",
        year=2023,
        fp32_tflops=30.3,
        fp16_tensor_tflops=121,
        bf16_tensor_tflops=121,
        memory_gb=24,
        memory_type="GDDR6",
        bandwidth_gbs=300,
        power_w=72,
        source="NVIDIA datasheet 'NVIDIA L4 Tensor Core GPU' (242 FP16/BF16 shown with sparsity, halved "
        "here; 300 GB/s; 72 W; PCIe Gen4 x16)",
        notes="The T4's successor in clouds: same power and bandwidth class, four times the FP32.",
        device_names=("nvidia l4",),
        pcie_generation=4,
        tensor_formats=("fp8", "tf32", "bf16", "fp16"),
    ),
)


class UnknownGpu(ValueError, KeyError):
    """A GPU the table does not hold: a ValueError (a bad argument), and a KeyError (a failed look-up)."""

    __str__ = BaseException.__str__  # the message as written, not quoted as a KeyError's key would be


def by_short_name(short: str) -> GpuSpec:
    """The table's row whose short label is `short` (e.g. "T4"), with a clear error otherwise."""
    if not isinstance(short, str):
        raise TypeError(f"short must be a GPU's short name such as 'T4', not {short!r} ({type(short).__name__})")
    for spec in GPUS:
        if spec.short.lower() == short.strip().lower():
            return spec
    raise UnknownGpu(f"no GPU called {short!r} in the table; it has {', '.join(s.short for s in GPUS)}")


def find_spec(device_name: str) -> GpuSpec | None:
    """The table's row for a device name as torch reports it ("Tesla T4"), or None if it is not in the table.

    Strict on purpose (an A100 40GB PCIe is not the A100 80GB SXM row): a wrong ceiling is worse than none.
    """
    name = " ".join(str(device_name).lower().split())  # runs of spaces as one
    for spec in GPUS:
        if any(fragment in name for fragment in spec.device_names):
            return spec
    return None


def format_table(specs: tuple[GpuSpec, ...] = GPUS) -> str:
    """The table as fixed-width text (dense peaks; '—' where the GPU lacks that hardware or no price was published)."""

    def cell(value: float | None, fmt: str = "{:g}") -> str:
        return "—" if value is None else fmt.format(value)

    header = (
        f"{'GPU':<10}{'year':>5}{'FP32':>7}{'FP16 TC':>9}{'BF16 TC':>9}{'memory':>14}{'GB/s':>7}"
        f"{'watts':>7}{'launch $':>10}  tensor formats"
    )
    units = f"{'':<10}{'':>5}{'TFLOP/s':>7}{'TFLOP/s':>9}{'TFLOP/s':>9}{'':>14}{'':>7}{'':>7}{'(MSRP)':>10}"
    lines = [header, units]
    for s in specs:
        memory = f"{s.memory_gb:g} GB {s.memory_type}"
        lines.append(
            f"{s.short:<10}{s.year:>5}{s.fp32_tflops:>7g}{cell(s.fp16_tensor_tflops):>9}"
            f"{cell(s.bf16_tensor_tflops):>9}{memory:>14}{s.bandwidth_gbs:>7g}{s.power_w:>7g}"
            f"{cell(s.launch_price_usd, '{:,.0f}'):>10}  {' '.join(s.tensor_formats) or '—'}"
        )
    return "\n".join(lines)
