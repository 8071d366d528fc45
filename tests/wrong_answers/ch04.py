"""Chapter 04's typical wrong answers, by question number (see the package's docstring)."""

from helpers.exercises.solutions.ch04 import SOLUTIONS

_TRAIN, _CLIP = SOLUTIONS[1], SOLUTIONS[2]
_CLIP_LINE = "    norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
_UNSCALE = "    scaler.unscale_(optimizer)\n"
#: Lines of question 1's solution that the answers below change.
_MOVE, _DATA = "    model.to(device)\n", "    X, y = X.to(device), y.to(device)\n"
_SCALER = "    scaler = torch.amp.GradScaler(device.type, enabled=low_precision(device) == torch.float16)\n"
_LOAD_SCALER = (
    '        if checkpoint.get("scaler"):  # empty (or absent) when the run that saved it had no use for a scaler\n'
    '            scaler.load_state_dict(checkpoint["scaler"])\n'
)
_STEP = "        scaler.scale(loss).backward()\n        scaler.step(optimizer)\n        scaler.update()\n"
_SAVE = (
    '    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "scaler": scaler.state_dict()}\n'
)


def _edit(code: str, *changes: tuple[str, str]) -> str:
    """`code` with each (old, new) of `changes` made, every old text present exactly once."""
    for old, new in changes:
        assert code.count(old) == 1, old
        code = code.replace(old, new)
    return code


#: The calls question 1's verdicts name, and its bugs as changes to the solution (alone and combined below).
_CALL = "fit(model, X, y, 3, path, torch.device('{}'))"
_ON_META, _ON_CPU = _CALL.format("meta") + " from scratch", _CALL.format("cpu")
_RESUMED = f"{_ON_CPU} resuming its CPU checkpoint relabelled as saved on cuda:1"  # a GPU this machine lacks
_HALF = f"{_ON_CPU} from scratch on x = eye(4) with low_precision giving float16, as on a T4"
_HUGE = f"{_ON_CPU} from scratch on x = eye(4), y = 1e5 with low_precision giving float16, as on a T4"
_NO_SCALER = (("scaler.scale(loss).backward()", "loss.backward()"), ("scaler.step(optimizer)", "optimizer.step()"))
_BUGS = {
    "model left": ((_MOVE, ""),),
    "data left": ((_DATA, ""),),
    "autocast for the CPU": (("torch.autocast(device.type", "torch.autocast('cpu'"),),
    "bfloat16 everywhere": (("dtype=low_precision(device))", "dtype=torch.bfloat16)"),),
    "no map_location": (('map_location="cpu", ', ""),),
    "moved after loading": ((_MOVE + _DATA, _DATA), ("    for _ in range", _MOVE + "    for _ in range")),
    "no scaler": (*_NO_SCALER, ("        scaler.update()\n", "")),
}
#: Other scalers a learner may make for question 1: on only for float16 (spelled otherwise), or always on.
_SCALERS = (
    "torch.amp.GradScaler(device.type, enabled=low_precision(device) is torch.float16)",
    "torch.amp.GradScaler(device.type)",
)

#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told).
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        (_edit(_TRAIN, *_BUGS["model left"]), f"{_ON_META} fed the model, on cpu, a tensor on meta"),
        (_edit(_TRAIN, *_BUGS["data left"]), f"{_ON_META} fed the model, on meta, a tensor on cpu"),
        (  # neither moved: it trains on the CPU whatever device it is given
            _edit(_TRAIN, *_BUGS["model left"], *_BUGS["data left"]),
            f"{_ON_META} left the model's parameters on cpu",
        ),
        (_edit(_TRAIN, *_BUGS["autocast for the CPU"]), f"{_ON_META} ran the model on meta under autocast for cpu"),
        (  # a torch.device where autocast takes its type
            _edit(_TRAIN, ("torch.autocast(device.type", "torch.autocast(device")),
            "from scratch raised ValueError (line 13 of your code): Expected `device_type` of type `str`",
        ),
        (
            _edit(_TRAIN, *_BUGS["bfloat16 everywhere"]),
            f"{_HALF} ran the model on cpu in torch.bfloat16, where low_precision(device) gives torch.float16",
        ),
        (  # a GPU checkpoint loaded without map_location on a machine without that GPU
            _edit(_TRAIN, *_BUGS["no map_location"]),
            f"{_RESUMED} raised RuntimeError (line 7 of your code): Attempting to deserialize object on a CUDA device",
        ),
        (  # the optimizer's state follows the parameters where they are when it is loaded: here, still the CPU
            _edit(_TRAIN, *_BUGS["moved after loading"]),
            f"{_CALL.format('meta')} resuming its CPU checkpoint relabelled as saved on cuda:1 stepped the optimizer "
            "with its state on cpu and the model on meta",
        ),
        (
            _edit(_TRAIN, *_BUGS["moved after loading"], ('map_location="cpu"', "map_location=device")),
            "stepped the optimizer with its state on cpu and the model on meta",
        ),
        (
            _edit(_TRAIN, ('        optimizer.load_state_dict(checkpoint["optimizer"])\n', "")),
            f"{_RESUMED} found the optimizer's state empty at its first step",
        ),
        (
            _edit(_TRAIN, ('        model.load_state_dict(checkpoint["model"])\n', "")),
            f"{_RESUMED} trained from other weights than the checkpoint's",
        ),
        (  # the checkpoint written before training
            _edit(
                _TRAIN,
                (_SAVE + "    torch.save(state, path)", ""),
                ("    for _ in", _SAVE + "    torch.save(state, path)\n    for _ in"),
            ),
            f"after {_ON_CPU} from scratch the checkpoint at path does not hold the weights the run ended with",
        ),
        (  # the checkpoint saved the first time only: a resumed run's progress is lost
            _edit(
                _TRAIN,
                ("    torch.save(state, path)", "    if not os.path.exists(path):\n        torch.save(state, path)"),
            ),
            f"after {_RESUMED} the checkpoint at path does not hold the weights the run ended with",
        ),
        (  # the optimizer's state copied before training and saved: the saved state is not the trained one
            _edit(
                _TRAIN,
                (
                    "    for _ in range(steps):",
                    "    before = copy.deepcopy(optimizer.state_dict())\n    for _ in range(steps):",
                ),
                ('"optimizer": optimizer.state_dict()', '"optimizer": before'),
                ("def fit(", "import copy\n\n\ndef fit("),
            ),
            f"after {_ON_CPU} from scratch the checkpoint at path does not hold the optimizer state the run ended with",
        ),
        (
            _edit(_TRAIN, (_SAVE + "    torch.save(state, path)", "    pass")),
            "from scratch saved no checkpoint at path",
        ),
        (  # a checkpoint torch.load cannot read: told so, not a bug in the course
            _edit(
                _TRAIN, (_SAVE + "    torch.save(state, path)", "    open(path, 'w').write(str(model.state_dict()))")
            ),
            f"torch.load of the checkpoint {_ON_CPU} from scratch left at path raised UnpicklingError",
        ),
        (  # float16 gradients unscaled: the small one is 0
            _edit(_TRAIN, *_BUGS["no scaler"]),
            f"{_HALF} never moved the weight whose gradient is -1e-8 (float16's smallest number is 6e-8)",
        ),
        (  # a scaler for CUDA alone: float16 elsewhere (Apple's GPUs) goes unscaled
            _edit(_TRAIN, ("enabled=low_precision", "enabled=device.type == 'cuda' and low_precision")),
            f"{_HALF} never moved the weight whose gradient is -1e-8",
        ),
        (  # GradScaler's default device is CUDA: elsewhere it warns and turns itself off
            _edit(_TRAIN, ("GradScaler(device.type, ", "GradScaler(")),
            f"{_HALF} never moved the weight",
        ),
        (  # scaled gradients stepped by the optimizer itself: an overflow is not skipped
            _edit(_TRAIN, ("scaler.step(optimizer)", "optimizer.step()"), ("        scaler.update()\n", "")),
            f"{_HALF} took an optimizer step with inf or nan gradients",
        ),
        (
            _edit(
                _TRAIN,
                ("        scaler.step(optimizer)\n", "        scaler.step(optimizer)\n        optimizer.step()\n"),
            ),
            f"{_ON_CPU} from scratch changed the weights 6 times in its 3 steps",
        ),
        (
            _edit(
                _TRAIN,
                (
                    _STEP,
                    "        scaler.scale(loss).backward()\n        scaler.update()\n        scaler.step(optimizer)\n",
                ),
            ),
            f"{_HALF} raised AssertionError (line 16 of your code): No inf checks were recorded prior to update.",
        ),
        (
            _edit(_TRAIN, ("        scaler.update()\n", "")),
            "raised RuntimeError (line 16 of your code): step() has already been called since the last update().",
        ),
        (  # a new scaler every step: its scale never comes down from an overflow
            _edit(
                _TRAIN, (_SCALER, ""), ("    for _ in range(steps):\n", "    for _ in range(steps):\n    " + _SCALER)
            ),
            f"{_HALF} changed the weights in 0 of its 3 steps (in 3 the gradients overflowed to inf)",
        ),
        (  # the gradients cleared between backward and step
            _edit(
                _TRAIN,
                (
                    _STEP + "        optimizer.zero_grad()\n",
                    "        scaler.scale(loss).backward()\n"
                    "        optimizer.zero_grad()\n"
                    "        scaler.step(optimizer)\n"
                    "        scaler.update()\n",
                ),
            ),
            f"{_ON_CPU} from scratch changed the weights in 0 of its 3 steps",
        ),
        (  # the scale not kept: a resumed float16 run overflows again where the run it resumes had got past it
            _edit(_TRAIN, (_LOAD_SCALER, ""), (', "scaler": scaler.state_dict()', "")),
            f"{_ON_CPU} resuming that float16 run with low_precision giving float16, as on a T4 began with (loss "
            "scale, good steps toward its growth) (65536.0, 0), not (16384.0, 1) (where the run it resumes left it)",
        ),
        (  # a bfloat16 run's scaler state is empty: a float16 run resuming it cannot load it
            _edit(_TRAIN, (_LOAD_SCALER, '        scaler.load_state_dict(checkpoint["scaler"])\n')),
            "resuming the bfloat16 run relabelled as saved on cuda:1 with low_precision giving float16, as on a T4 "
            "raised RuntimeError (line 10 of your code): The source state dict is empty",
        ),
        (  # a loss read back every step: meta has no values
            _edit(
                _TRAIN,
                ("        optimizer.zero_grad()\n", "        optimizer.zero_grad()\n        print(loss.item())\n"),
            ),
            f"{_ON_META} raised RuntimeError (line 19 of your code): Tensor.item() cannot be called on meta tensors",
        ),
        # bugs combined: the first case that shows one names it
        (
            _edit(_TRAIN, *_BUGS["model left"], *_BUGS["data left"], *_BUGS["no map_location"], *_BUGS["no scaler"]),
            f"{_ON_META} left the model's parameters on cpu",
        ),
        (_edit(_TRAIN, *_BUGS["no map_location"], *_BUGS["no scaler"]), f"{_RESUMED} raised RuntimeError"),
        (
            _edit(_TRAIN, *_BUGS["moved after loading"], *_BUGS["bfloat16 everywhere"]),
            "stepped the optimizer with its state on cpu and the model on meta",
        ),
        (
            _edit(_TRAIN, *_BUGS["bfloat16 everywhere"], *_BUGS["no scaler"]),
            f"{_HALF} ran the model on cpu in torch.bfloat16",
        ),
        (_edit(_TRAIN, *_BUGS["autocast for the CPU"], *_BUGS["no map_location"]), "under autocast for cpu"),
    ),
    2: (
        (  # the bug as given: clips the scaled gradients, then unscales them
            _CLIP.replace(_UNSCALE + _CLIP_LINE, _CLIP_LINE + _UNSCALE),
            "clipped_step(model on cpu, SGD(lr=0.5), GradScaler(2**16), x, y=(1.5, -1.5, 1.5, 0), 0.25) the weights "
            "differ from one "
            "SGD step: they moved 2**16 times too little: clip_grad_norm_ saw scaled gradients",
        ),
        (  # the bug as given with its log fixed: told by the weights, not the norm returned (round 4)
            _CLIP.replace(_UNSCALE + _CLIP_LINE, _CLIP_LINE + _UNSCALE).replace("return norm", "return norm / 65536"),
            "they moved 2**16 times too little: clip_grad_norm_ saw scaled gradients",
        ),
        (  # always rescales the gradients to norm max_norm, scaling them up where the norm is below it (round 4; its
            # slip dropped in round 6: tests/unit/test_messages_ch04.py checks that no slip is named)
            _CLIP.replace(
                "max_norm)\n", 'float("inf"))\n    for p in model.parameters():\n        p.grad.mul_(max_norm / norm)\n'
            ),
            "x, y=(0.1, 1/3, -0.7, 0.2), 5.0) the weights differ from one SGD step",
        ),
        (  # max_norm fixed at the value of one call
            _CLIP.replace("parameters(), max_norm)", "parameters(), 0.5)"),
            "after clipped_step(model on cpu, SGD(lr=0.5), GradScaler(2**16), x, y=(1.5, -1.5, 1.5, 0), 0.25) the "
            "weights differ "
            "from one SGD step",
        ),
        (  # clips each gradient's value, not their norm (named in round 5, generic since round 6)
            _CLIP.replace(
                _CLIP_LINE, _CLIP_LINE + "    nn.utils.clip_grad_value_(model.parameters(), max_norm)\n"
            ).replace(
                "norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm)",
                "norm = torch.linalg.vector_norm(torch.cat([p.grad.flatten() for p in model.parameters()]))",
            ),
            "after clipped_step(model on cpu, SGD(lr=0.5), GradScaler(2**16), x, y=(1.5, -1.5, 1.5, 0), 0.25) the "
            "weights differ from one SGD step",
        ),
        (  # unscales by hand, then steps through the scaler, which unscales again
            _CLIP.replace(
                _UNSCALE,
                "    for p in model.parameters():\n        p.grad.mul_(1 / scaler.get_scale())\n",
            ),
            "the scale was divided out again after the clip",
        ),
        (  # the norm after clipping
            _CLIP.replace("    return norm", "    return min(norm, torch.tensor(max_norm))"),
            "returned 0.25; expected the unclipped norm, 1.5",
        ),
        (  # unscales before clipping and keeps the old unscale_ too: the scaler refuses the second
            _CLIP.replace(_CLIP_LINE, _CLIP_LINE + _UNSCALE),
            "unscale_() has already been called on this optimizer since the last update()",
        ),
        (  # lets scaler.step unscale, and clips after it: the step used the unclipped gradients
            _CLIP.replace(
                _UNSCALE + _CLIP_LINE + "    scaler.step(optimizer)\n", "    scaler.step(optimizer)\n" + _CLIP_LINE
            ),
            "x, y=(1.5, -1.5, 1.5, 0), 0.25) the weights differ from one SGD step: they are an unclipped step's: "
            "clip them to "
            "max_norm after scaler.unscale_, before scaler.step",
        ),
        (  # unscales and clips, then steps the optimizer itself: a step whose gradients overflowed is not skipped
            _CLIP.replace("scaler.step(optimizer)", "optimizer.step()"),
            "clipped_step(model on cpu, SGD(lr=0.5), GradScaler(2**16), x, y=(1.5, -1.5, 1.5, 0), 0.25) never called "
            "scaler.step on the scaler given: backward and step go through it",
        ),
        (  # unscales after the step, then clips: too late, and the scaler refuses it
            _CLIP.replace(
                _UNSCALE + _CLIP_LINE + "    scaler.step(optimizer)\n",
                "    scaler.step(optimizer)\n" + _UNSCALE + _CLIP_LINE,
            ),
            "unscale_() is being called after step()",
        ),
        (  # the right order, but the scale is never updated
            _CLIP.replace("    scaler.update()\n", ""),
            "left the scale at 65536",
        ),
        (  # no clipping at all
            _CLIP.replace(_CLIP_LINE, "    norm = torch.tensor(0.5**0.5)\n"),
            "they are an unclipped step's",
        ),
        (  # neither scaler.step nor optimizer.step
            _CLIP.replace("    scaler.step(optimizer)\n    scaler.update()\n", ""),
            "clipped_step(model on cpu, SGD(lr=0.5), GradScaler(2**16), x, y=(1.5, -1.5, 1.5, 0), 0.25) never called "
            "scaler.step on the scaler given",
        ),
        (  # optimizer.step() on the scaled gradients, no unscale_: update() has no inf check to read
            _CLIP.replace(_UNSCALE, "").replace("scaler.step(optimizer)", "optimizer.step()"),
            "No inf checks were recorded prior to update",
        ),
        (  # each parameter's gradient clipped on its own (round 3): the bias's gradient is not 0 (named in round 5)
            _CLIP.replace(
                _CLIP_LINE,
                "    norm = torch.linalg.vector_norm(torch.cat([p.grad.flatten() for p in model.parameters()]))\n"
                "    for p in model.parameters():\n"
                "        nn.utils.clip_grad_norm_(p, max_norm)\n",
            ),
            "after clipped_step(model on cpu, SGD(lr=0.5), GradScaler(2**16), x, y=(1.5, -1.5, 1.5, 0), 0.25) the "
            "weights differ from one SGD step",
        ),
        (  # clipped by the largest gradient (norm_type=inf, round 5), not by the 2-norm of them all
            _CLIP.replace("max_norm)\n", "max_norm, norm_type=float('inf'))\n"),
            "x, y=(1.5, -1.5, 1.5, 0), 0.25) the weights differ from one SGD step",
        ),
        (  # the weight's gradient alone clipped
            _CLIP.replace("clip_grad_norm_(model.parameters(), max_norm)", "clip_grad_norm_(model.weight, max_norm)"),
            "after clipped_step(model on cpu, SGD(lr=0.5), GradScaler(2**16), x, y=(1.5, -1.5, 1.5, 0), 0.25) the "
            "weights differ from one SGD step",
        ),
        (  # returns the loss instead of the norm
            _CLIP.replace("return norm", "return loss"),
            "returned 1.6875; expected the unclipped norm, 1.5",
        ),
        (  # returns the norm of the scaled gradients
            _CLIP.replace(_UNSCALE + _CLIP_LINE, _CLIP_LINE.replace("max_norm)", "max_norm * 2**16)") + _UNSCALE),
            "returned 98304; expected the unclipped norm, 1.5: that is the scaled value",
        ),
        (  # clips to section 6's norm, not max_norm: not told the order is wrong (round 2)
            _CLIP.replace(_CLIP_LINE, _CLIP_LINE.replace("max_norm)", "1.0)")),
            "x, y=(1.5, -1.5, 1.5, 0), 0.25) the weights differ from one SGD step: they are a step clipped to norm "
            "1 (section 6): clip to max_norm",
        ),
    ),
}


#: Right answers other than the solution, as a learner could write them: each must be accepted.
RIGHT_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        # a fused Adam (meta has no fused kernels: its stand-in runs the others) and the scaler given the device
        _edit(
            _TRAIN,
            (
                "torch.optim.Adam(model.parameters(), lr=1e-2)",
                "torch.optim.Adam(model.parameters(), lr=1e-2, fused=True)",
            ),
            ("torch.amp.GradScaler(device.type, ", "torch.amp.GradScaler(device, "),
        ),
        # AdamW without weight decay is Adam; the state dicts passed by keyword; saved as CPU copies (meta's are zeros)
        _edit(
            _TRAIN,
            (
                "torch.optim.Adam(model.parameters(), lr=1e-2)",
                "torch.optim.AdamW(model.parameters(), 1e-2, weight_decay=0)",
            ),
            ('load_state_dict(checkpoint["model"])', 'load_state_dict(state_dict=checkpoint["model"])'),
            ('load_state_dict(checkpoint["optimizer"])', 'load_state_dict(state_dict=checkpoint["optimizer"])'),
            ('"model": model.state_dict()', '"model": {k: v.cpu() for k, v in model.state_dict().items()}'),
        ),
        _edit(_TRAIN, ("lr=1e-2)", "lr=1e-2, foreach=True)")),
        *(
            _edit(_TRAIN, ("torch.amp.GradScaler(device.type, enabled=low_precision(device) == torch.float16)", s))
            for s in _SCALERS
        ),
        # keywords and positions, `device=` for `.to(device)`, the optimizer made before the move (it keeps the
        # parameters, which `to` moves in place), a Path, the scaler kept only when it is on
        _edit(
            _TRAIN,
            (
                "torch.autocast(device.type, dtype=low_precision(device))",
                "torch.amp.autocast(device_type=device.type, dtype=low_precision(device))",
            ),
            (
                _MOVE + _DATA,
                "    model = model.to(device=device)\n"
                "    X, y = torch.as_tensor(X, device=device), y.to(device=device)\n",
            ),
        ),
        _edit(
            _TRAIN,
            (_MOVE, ""),
            (
                "    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)\n",
                "    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)\n" + _MOVE,
            ),
            ("os.path.exists(path)", "__import__('pathlib').Path(path).exists()"),
            ('map_location="cpu"', "map_location=lambda storage, location: storage"),
            (
                _LOAD_SCALER,
                '        if "scaler" in checkpoint and scaler.is_enabled():\n'
                '            scaler.load_state_dict(checkpoint["scaler"])\n',
            ),
            (
                _SAVE,
                '    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict()}\n'
                "    if scaler.is_enabled():\n"
                '        state["scaler"] = scaler.state_dict()\n',
            ),
        ),
        # loaded onto the CPU, the model moved, then the optimizer made and loaded where the parameters now are
        _edit(
            _TRAIN,
            (_MOVE, ""),
            ("    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)\n", ""),
            (
                '        model.load_state_dict(checkpoint["model"])\n',
                '        model.load_state_dict(checkpoint["model"])\n',
            ),
            ("    if os.path.exists(path):\n", "    checkpoint = None\n    if os.path.exists(path):\n"),
            ('        optimizer.load_state_dict(checkpoint["optimizer"])\n', ""),
            (
                "    for _ in range(steps):",
                "    model.to(device)\n"
                "    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)\n"
                "    if checkpoint:\n"
                "        optimizer.load_state_dict(checkpoint['optimizer'])\n"
                "    for _ in range(steps):",
            ),
        ),
        # a scaler only for float16, and a loop for each case; the loss after the autocast block; zero_grad first
        _edit(
            _TRAIN,
            (
                _SCALER,
                "    scaler = torch.amp.GradScaler(device.type) if low_precision(device) == torch.float16 else None\n",
            ),
            (
                _LOAD_SCALER,
                '        if scaler and checkpoint.get("scaler"):\n'
                '            scaler.load_state_dict(checkpoint["scaler"])\n',
            ),
            (
                "            loss = nn.functional.mse_loss(model(X), y)\n",
                "            out = model(X)\n"
                "        loss = nn.functional.mse_loss(out.float(), y)\n"
                "        optimizer.zero_grad(set_to_none=True)\n",
            ),
            (
                _STEP,
                "        if scaler:\n"
                "            scaler.scale(loss).backward()\n"
                "            scaler.step(optimizer)\n"
                "            scaler.update()\n"
                "        else:\n"
                "            loss.backward()\n"
                "            optimizer.step()\n",
            ),
            ("        optimizer.zero_grad()\n", ""),
            ('"scaler": scaler.state_dict()', '"scaler": scaler.state_dict() if scaler else {}'),
        ),
    ),
    2: (
        _CLIP.replace("max_norm)", "max_norm, foreach=True)"),
        _CLIP.replace("model.parameters(), max_norm", "optimizer.param_groups[0]['params'], max_norm"),
    ),
}

#: Round 11's finding on question 2 (then 5): a second step
WRONG_ANSWERS[2] += (
    (
        SOLUTIONS[2].replace("    optimizer.zero_grad()\n", "    scaler.step(optimizer)\n    optimizer.zero_grad()\n"),
        "called scaler.step 2 times: step the optimizer once",
    ),
)

#: Round 1 of part 7 (the learner-attack): what the checkpoint holds, a static loss scale, the colleague's own
#: optimizer, rate, batch and loss (the CPU run's weights against the script's), weights cast to bfloat16.
_OTHER_WEIGHTS = f"{_ON_CPU} from scratch trained to other weights than the colleague's script gives on the CPU"
_STATIC = "        (loss * {0}).backward()\n        for p in model.parameters():\n            p.grad /= {0}\n"
WRONG_ANSWERS[1] += (
    *(  # a fixed loss scale with no inf check: small gradients survive, an overflow is stepped on
        (
            _edit(_TRAIN, *_BUGS["no scaler"], ("        loss.backward()\n", _STATIC.format(scale))),
            f"{_HUGE} took an optimizer step with inf or nan gradients",
        )
        for scale in (8, 1024)
    ),
    (_edit(_TRAIN, ("torch.optim.Adam(", "torch.optim.SGD(")), _OTHER_WEIGHTS),
    (_edit(_TRAIN, ("torch.optim.Adam(", "torch.optim.AdamW(")), _OTHER_WEIGHTS),  # weight_decay=0.01
    (_edit(_TRAIN, ("lr=1e-2", "lr=1e-3")), _OTHER_WEIGHTS),
    (_edit(_TRAIN, ("mse_loss(model(X), y)", "l1_loss(model(X), y)")), _OTHER_WEIGHTS),
    (_edit(_TRAIN, ("mse_loss(model(X), y)", "mse_loss(model(X), y, reduction='sum')")), _OTHER_WEIGHTS),
    (  # minibatches of 16 where the script takes the whole batch
        _edit(
            _TRAIN,
            ("loss = nn.functional.mse_loss(model(X), y)", "loss = nn.functional.mse_loss(model(X[:16]), y[:16])"),
        ),
        _OTHER_WEIGHTS,
    ),
    (  # the model cast to bfloat16 as well as autocast: its weights and Adam's state in 16 bits
        _edit(_TRAIN, (_MOVE, "    model.to(device, torch.bfloat16)\n")),
        f"{_ON_CPU} from scratch left the model's parameters in torch.bfloat16",
    ),
)

#: Round 1 of part 7 on question 2: the norm read back as a float (a wait on a GPU at every step), and the colleague's
#: clip_grad_norm_(error_if_nonfinite=True) kept once the order is fixed: the overflow the scaler skips raises there.
WRONG_ANSWERS[2] += (
    (
        _CLIP.replace("return norm", "return norm.item()"),
        "y=(1.5, -1.5, 1.5, 0), 0.25) returned float 1.5, not clip_grad_norm_'s tensor on cpu",
    ),
    (
        _CLIP.replace("max_norm)\n", "max_norm, error_if_nonfinite=True)\n"),
        "x, y=1e38, 0.5) raised RuntimeError (line 8 of your code): The total norm of order 2.0 for gradients from "
        "`parameters` is non-finite",
    ),
)

#: Round 2 of part 7 (the learner-attack): a map_location for cuda:0 alone (a checkpoint from Kaggle's second T4 still
#: fails on a CPU), the loss printed or copied each step (on a GPU, a read each time), the gradients never cleared, the
#: autocast of another device; the gradients cleared at the start of the step are right (the question asks no more).
_PRINTED = (
    "from scratch raised RuntimeError (line 19 of your code): print, an f-string, .cpu() of a number (a loss, a step "
    "count) read it back: meta, a GPU's stand-in, has none"
)
WRONG_ANSWERS[1] += (
    (
        _edit(_TRAIN, ('map_location="cpu"', 'map_location={"cuda:0": str(device)}')),
        f"{_RESUMED} raised RuntimeError (line 7 of your code): Attempting to deserialize object on a CUDA device",
    ),
    *(
        (
            _edit(_TRAIN, ("        optimizer.zero_grad()\n", f"        optimizer.zero_grad()\n        {shown}\n")),
            _PRINTED,
        )
        for shown in ('print("loss", loss)', 'print(f"loss {loss:.4f}")', "last = loss.detach().cpu()")
    ),
)
WRONG_ANSWERS[2] += (
    (
        _CLIP.replace("    optimizer.zero_grad()\n", ""),
        "0.25) left gradients in .grad and never called zero_grad: the next step would add to them",
    ),
    (
        _CLIP.replace("device_type=device.type", 'device_type="cuda"'),
        "0.25) ran the model without autocast for cpu: device_type=device.type",
    ),
    (  # autocast's own default dtype: float16 on a CPU whose default the check sets so
        _CLIP.replace(", dtype=low_precision(device)", ""),
        "0.25) ran the model under autocast in torch.float16; expected torch.bfloat16: dtype=low_precision(device)",
    ),
)
RIGHT_ANSWERS[2] += (  # the gradients cleared at the start of the step, by the optimizer or the model
    *(
        _CLIP.replace("    optimizer.zero_grad()\n", "").replace(
            "    device =", f"    {clear}.zero_grad()\n    device ="
        )
        for clear in ("optimizer", "model")
    ),
)

#: Round 3 of part 7's attack: a lower starting scale hid a scale never saved; the norm read back on the host.
_LOW = _edit(_TRAIN, ("GradScaler(device.type, enabled", "GradScaler(device.type, init_scale=2.0**10, enabled"))
WRONG_ANSWERS[1] += (
    (  # no overflow in the tiny run at 2**10: the run that overflows at every scale shows the scale was not kept
        _edit(_LOW, (_LOAD_SCALER, ""), (', "scaler": scaler.state_dict()', "")),
        f"{_ON_CPU} resuming that float16 run with low_precision giving float16, as on a T4 began with (loss scale, "
        "good steps toward its growth) (1024.0, 0), not (1024.0, 3) (where the run it resumes left it)",
    ),
    (_edit(_LOW, (_LOAD_SCALER, "")), "resuming that float16 run with low_precision giving float16, as on a T4 began"),
)
WRONG_ANSWERS[2] += tuple(
    (
        _CLIP.replace("    return norm", f"    {body}"),
        f"0.25) read on the host ({how}) a value computed from the gradients",
    )
    for body, how in (
        ("return norm.cpu()", ".cpu()"),
        ("return torch.tensor(norm.item())", ".item()"),
        ("return norm.detach().cpu()", ".cpu()"),
        ("print(f'norm {norm:.3f}')\n    return norm", "format()"),
        ("print('norm', norm)\n    return norm", "repr()"),
        ("log = (norm * 1).item()\n    return norm", ".item()"),  # rounds 4 and 5: a read of what the norm gave,
        ("log = norm.clone().cpu()\n    return norm", ".cpu()"),  # and a blocking copy to the host for a log
        ("log = norm.to('cpu')\n    return norm", ".to()"),
        ("log = torch.as_tensor(norm, device='cpu')\n    return norm", ".as_tensor()"),
    )
)
RIGHT_ANSWERS[1] += (  # the data copied to the device at every step: slower than once, but right (decided, round 3)
    _edit(_TRAIN, (_DATA, ""), ("model(X), y)", "model(X.to(device)), y.to(device))")),
    _LOW,  # a lower starting scale, saved and loaded
)
RIGHT_ANSWERS[2] += (_CLIP.replace("return norm", "return norm.detach()"),)

#: Round 4 of part 7's attack. Question 1: the scale kept as a number (a bfloat16 run's is 1); Adam's step count moved
#: to the device (read back every step); host reads on the float16 path alone (meta now runs it too). Question 2: reads
#: of what the norm gave (a comparison, a copy, a sum of the gradients), a norm made 0 on overflow or float16.
_AS_NUMBER = _edit(
    _TRAIN,
    (_SCALER, ""),
    (_LOAD_SCALER, '        init = checkpoint.get("scale", init)\n'),
    ("    if os.path.exists(path):", "    init = 2.0**16\n    if os.path.exists(path):"),
    (
        "    for _ in range(steps):",
        _SCALER.replace("device.type, ", "device.type, init_scale=init, ") + "    for _ in range(steps):",
    ),
    ('"scaler": scaler.state_dict()', '"scale": scaler.get_scale()'),
)
WRONG_ANSWERS[1] += (
    (
        _AS_NUMBER,
        "resuming that float16 run with low_precision giving float16, as on a T4 began with (loss scale, good steps "
        "toward its growth) (16384.0, 0), not (16384.0, 1) (where the run it resumes left it)",
    ),
    *(
        (
            _edit(_TRAIN, *edits),
            f"{_RESUMED.replace('cpu', 'meta', 1)} stepped the optimizer with its state on meta (a step count, read "
            "back each step) and the model on meta",
        )
        for edits in (
            (('map_location="cpu"', "map_location=device"),),
            (
                (
                    "    for _ in range(steps):",
                    "    for state in optimizer.state.values():\n"
                    "        state.update({k: v.to(device) for k, v in state.items()})\n"
                    "    for _ in range(steps):",
                ),
            ),
        )
    ),
    (
        _edit(
            _TRAIN,
            (
                "        optimizer.zero_grad()\n",
                "        optimizer.zero_grad()\n        if scaler.is_enabled():\n            print(loss.item())\n",
            ),
        ),
        "fit(model, X, y, 3, path, torch.device('meta')) from scratch with low_precision giving float16, as on a T4 "
        "raised RuntimeError (line 20 of your code): Tensor.item() cannot be called on meta tensors",
    ),
)
_TOTAL = "    norm = nn.utils.get_total_norm([p.grad for p in model.parameters()])\n"
WRONG_ANSWERS[2] += (
    *(
        (
            _CLIP.replace(
                _CLIP_LINE,
                _TOTAL
                + f"    if {test}:\n        nn.utils.clip_grads_with_norm_(model.parameters(), max_norm, norm)\n",
            ),
            "0.25) read on the host (bool()) a value computed from the gradients: on a GPU, a wait each step",
        )
        for test in ("torch.isfinite(norm)", "norm > max_norm")
    ),
    (
        _CLIP.replace(
            _CLIP_LINE,
            "    norm = torch.tensor(sum(p.grad.pow(2).sum().item() for p in model.parameters()) ** 0.5)\n"
            + _CLIP_LINE.replace("norm = ", ""),
        ),
        "read on the host (.item()) a value computed from the gradients",
    ),
    *(
        (_CLIP.replace("return norm", f"return {made}"), "; expected the unclipped norm, inf")
        for made in ("torch.nan_to_num(norm)", "torch.where(norm.isfinite(), norm, 0.0)")
    ),
    (
        _CLIP.replace("return norm", "return norm.half()"),
        "0.25) returned Tensor tensor(1.5000, dtype=torch.float16), not",
    ),
)
RIGHT_ANSWERS[2] += (
    # clipped by hand to the clip_grad_norm_ rule, no host read
    _CLIP.replace(
        _CLIP_LINE,
        "    norm = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in model.parameters()]))\n"
        "    for p in model.parameters():\n"
        "        p.grad.mul_(torch.clamp(max_norm / (norm + 1e-6), max=1.0))\n",
    ),
    # the scaled gradients clipped to max_norm times the scale, the norm divided by it
    _CLIP.replace(_UNSCALE, "")
    .replace("    scaler.scale(loss)", "    scale = scaler.get_scale()\n    scaler.scale(loss)")
    .replace("max_norm)\n", "max_norm * scale)\n")
    .replace("    return norm", "    return norm / scale"),
)
#: Round 5: an inf norm hidden from the log (the overflow case now overflows to inf, as a T4's float16 does, not nan);
#: the scale kept without the count of good steps toward its growth.
WRONG_ANSWERS[2] += tuple(
    (
        _CLIP.replace("return norm", f"return {made}"),
        f"x, y=1e38, 0.5) returned {shown}; expected the unclipped norm, inf",
    )
    for made, shown in (
        ("torch.where(torch.isinf(norm), torch.zeros_like(norm), norm)", "0"),
        ("norm.clamp(max=1e4)", "10000"),
        ("norm.nan_to_num(nan=float('nan'), posinf=-1.0)", "-1"),
    )
)
WRONG_ANSWERS[1] += (
    (
        _edit(_AS_NUMBER, ('init = checkpoint.get("scale", init)', 'init = checkpoint.get("scale") or init')),
        "(16384.0, 0), not (16384.0, 1) (where the run it resumes left it)",
    ),
)
RIGHT_ANSWERS[2] += (_CLIP.replace("    return norm", "    log = norm.to('cpu', non_blocking=True)\n    return norm"),)
#: Round 6: the scale divided out as a constant 2**16 (the last case's scaler starts at 2**14); a float64 norm is right
WRONG_ANSWERS[2] += (
    (
        _CLIP.replace(_UNSCALE + _CLIP_LINE, _CLIP_LINE.replace("max_norm)", "max_norm * 2**16) / 2**16")),
        "clipped_step(model on cpu, SGD(lr=0.5), GradScaler(2**14), x, y=(0.1, 1/3, -0.7, 0.2), 5.0) returned",
    ),
)
RIGHT_ANSWERS[2] += (_CLIP.replace("return norm", "return norm.double()"),)
WRONG_ANSWERS[2] += (  # round 7: a norm of shape (1,) (an f-string log of it raises)
    (_CLIP.replace("return norm", "return norm.reshape(1)"), "0.25) returned Tensor tensor([1.5000]), not"),
)
WRONG_ANSWERS[1] += (  # round 8: the dtype asked of the CPU, before the move (on a T4: bfloat16, emulated, scaler off)
    (
        _edit(
            _TRAIN,
            (_MOVE, "    low = low_precision(next(model.parameters()).device)\n" + _MOVE),
            ("enabled=low_precision(device) == torch.float16", "enabled=low == torch.float16"),
            ("dtype=low_precision(device))", "dtype=low)"),
        ),
        f"{_ON_META} with low_precision giving float16, as on a T4 raised RuntimeError (line 2 of your code): "
        "low_precision asked of a device fit does not train on",
    ),
)
WRONG_ANSWERS[1] += (  # round 9: the scaler keyed on the CPU's dtype before the move, autocast on the device's
    (
        _edit(
            _TRAIN,
            (_MOVE, ""),
            (_SCALER, _SCALER + _MOVE),
            ("enabled=low_precision(device)", "enabled=low_precision(next(model.parameters()).device)"),
        ),
        "low_precision asked of a device fit does not train on",
    ),
)
RIGHT_ANSWERS[1] += (  # round 10: section 6's low_precision called with its argument named
    _TRAIN.replace("low_precision(device)", "low_precision(device=device)"),
)
