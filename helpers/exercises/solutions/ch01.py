SOLUTIONS: dict[int, str] = {
    1: """def try_gpu(i=0):
    accelerator = torch.accelerator.current_accelerator(check_available=True)
    if accelerator is not None and 0 <= i < torch.accelerator.device_count():  # no device -1 either: the CPU
        return torch.device(accelerator.type, i)
    return torch.device("cpu")""",
    2: """def try_all_gpus():
    accelerator = torch.accelerator.current_accelerator(check_available=True)
    if accelerator is None:
        return [torch.device("cpu")]
    return [torch.device(accelerator.type, i) for i in range(torch.accelerator.device_count())]""",
    3: """def count_usable_cpus():
    if hasattr(os, "sched_getaffinity"):  # Linux
        return len(os.sched_getaffinity(0))
    return os.cpu_count()  # macOS and Windows have no per-process CPU set here""",
    4: """import helpers.devices


def stage_devices():
    devices = helpers.devices.try_all_gpus()  # [cpu] when no accelerator is usable
    second = devices[1] if len(devices) >= 2 else devices[0]  # one GPU, or the CPU: both stages share it
    return devices[0], second""",
}
