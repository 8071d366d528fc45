SOLUTIONS: dict[int, str] = {
    1: """def allocated_bytes(tensors):
    storages = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in tensors}
    return sum((n + 511) // 512 * 512 for n in storages.values())""",
    2: """def predict_peak_bytes(model, batch_size, activation_bytes_per_sample):
    held = sum(p.numel() * p.element_size() * (4 if p.requires_grad else 1) for p in model.parameters())
    return held + batch_size * activation_bytes_per_sample""",
}
