"""Chapter 04's typical wrong answers, by question number (see the package's docstring)."""

from helpers.exercises.solutions.ch04 import SOLUTIONS

from . import OWN_SEQUENCE

#: The calls that predict's models are shown as, on the CPU; what it is told for a change to x, the weights, a mode.
_TANH = "predict(Sequential(Tanh, Linear) on cpu, torch.float32 x on cpu)"
_NORMED = "predict(float16 (frozen Embedding, BatchNorm1d, BatchNorm1d in eval) on cpu, torch.int64 x on cpu)"
_X = " changed x (its values, dtype or requires_grad): leave x and the model as they were"
_W, _MODE = (
    " changed the model's weights or buffers (values, dtype, requires_grad or .grad)",
    " changed a module's train/eval mode",
)
_PREDICT, _EPOCH, _AMP, _CLIP = (
    "def predict(model, x):\n    return model(x.to(next(model.parameters()).device))",
    *(SOLUTIONS[n] for n in (2, 4, 5)),
)
#: The loop of question 2's solution, which the wrong answers below change.
_LOOP = "    for xb, yb in zip(X.to(device).split(batch_size), y.to(device).split(batch_size)):\n"
_CLIP_LINE = "    norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
_UNSCALE = "    scaler.unscale_(optimizer)\n"

#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told).
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        (  # round 8's finding: autograd turned off for the rest of the notebook (set back, and told)
            "def predict(model, x):\n    torch.set_grad_enabled(False)\n"
            "    return model(x.to(next(model.parameters()).device))",
            "your code changed torch's grad mode (off only in `with torch.no_grad():`), which would outlast the check",
        ),
        (  # the output brought back to the CPU: a copy the question does not ask for, impossible from meta
            "def predict(model, x):\n    return model(x.to(next(model.parameters()).device)).cpu()",
            "Cannot copy out of meta tensor",
        ),
        (
            "def predict(model, x):\n    x.mul_(1.5)\n    return model(x.to(next(model.parameters()).device))",
            "predict(Sequential(Tanh, Linear) on cpu, torch.float32 x on cpu) changed x (its values, dtype or "
            "requires_grad): leave x and the model as they were",
        ),
        (  # x made to require gradients (round 5): the caller's x is changed too
            _PREDICT.replace("    return", "    if x.is_floating_point():\n        x.requires_grad_(True)\n    return"),
            _TANH + _X,
        ),
        (  # x left where it is: the model on the CPU is fed it on meta
            "def predict(model, x):\n    return model(x)",
            "predict(Sequential(Tanh, Linear) on cpu, torch.float32 x on meta) fed the model a torch.float32 tensor of "
            "shape (4, 3) on meta; expected x (torch.float32) on cpu",
        ),
        (  # the model moved to the input
            "def predict(model, x):\n    return model.to(x.device)(x)",
            "predict(Sequential(Tanh, Linear) on cpu, torch.float32 x on meta) moved the model (or tried to): leave it "
            "on cpu, and move the data there",
        ),
        (  # moves the model where it can, and x where moving the model fails: the model still leaves its device
            "def predict(model, x):\n    try:\n        model.to(x.device)\n    except NotImplementedError:\n"
            "        x = x.to(next(model.parameters()).device)\n    return model(x)",
            "x on meta) moved the model (or tried to): leave it on cpu",
        ),
        (  # a moved copy of the model: it runs where x is, not where the model lives
            "import copy\n\ndef predict(model, x):\n    return copy.deepcopy(model).to(x.device)(x)",
            "x on meta) fed a copy of the model a torch.float32 tensor of shape (4, 3) on meta; expected x "
            "(torch.float32) on cpu",
        ),
        (  # torch's advice for moving a model from meta: empty parameters, the weights lost
            "def predict(model, x):\n    return model.to_empty(device=x.device)(x)",
            _TANH + _W,
        ),
        (  # the first layer's weight: not every model starts with one
            "def predict(model, x):\n    return model(x.to(model[0].weight.device))",
            "predict(Sequential(Tanh, Linear) on cpu, torch.float32 x on cpu) raised AttributeError (line 2 of your "
            "code): 'Tanh' object has no attribute 'weight'",
        ),
        (  # x cast to the parameters' dtype too: an Embedding's integer indices become floats
            "def predict(model, x):\n    return model(x.type_as(next(model.parameters())))",
            "predict(float16 (frozen Embedding, BatchNorm1d, BatchNorm1d in eval) on cpu, torch.int64 x on cpu) fed "
            "the model a torch.float16 tensor of shape (4, 3) on cpu; expected x (torch.int64) on cpu",
        ),
        (
            "def predict(model, x):\n    return model(x.to(next(model.parameters())))",
            "torch.int64 x on cpu) fed the model a torch.float16 tensor",
        ),
        (  # an error swallowed: with x on meta there is nothing to return
            "def predict(model, x):\n    try:\n        return model(x.to(next(model.parameters()).device))\n"
            "    except NotImplementedError:\n        return None",
            "predict(Sequential(Tanh, Linear) on cpu, torch.float32 x on meta) returned None; expected an error: x on "
            "meta has no values for cpu",
        ),
        (  # train mode set (round 6): the mode is named, not the BatchNorm statistics it then updates
            _PREDICT.replace("    return", "    model.train()\n    return"),
            _NORMED + _MODE + ": leave x and the model as they were",
        ),
        (  # eval mode left on: the caller's model is changed
            "def predict(model, x):\n    model.eval()\n    return model(x.to(next(model.parameters()).device))",
            _TANH + _MODE + ": leave x and the model as they were",
        ),
        (
            "def predict(model, x):\n    return model(x.to(model.device))",
            "'Sequential' object has no attribute 'device'",
        ),
        (  # a model's first layer is not always called `weight`
            "def predict(model, x):\n    return model(x.to(model.weight.device))",
            "'Sequential' object has no attribute 'weight'",
        ),
        (  # the device hard-coded, as the sources do
            "def predict(model, x):\n    return model(x.to('cuda' if torch.cuda.is_available() else 'cpu'))",
            "fed the model a torch.float32 tensor of shape (4, 3) on",
        ),
        (  # a NumPy array back
            "def predict(model, x):\n    return model(x.to(next(model.parameters()).device)).detach().numpy()",
            "predict(Sequential(Tanh, Linear) on cpu, torch.float32 x on cpu) returned array([[",
        ),
        (  # eval mode for the call, then train mode whatever the model was in (round 2)
            _PREDICT.replace("    return model(", "    model.eval()\n    try:\n        return model(")
            + "\n    finally:\n        model.train()",
            _NORMED + _MODE,
        ),
        (  # the top module's mode put back, which sets every layer's: the BatchNorm in eval mode is left training
            _PREDICT.replace("    return model(", "    was = model.training\n    model.eval()\n    out = model(")
            + "\n    model.train(was)\n    return out",
            _NORMED + " changed",
        ),
        (  # no gradients for prediction, and none for training afterwards either (round 2)
            _PREDICT.replace("    return model(", "    model.requires_grad_(False)\n    return model("),
            _TANH + _W,
        ),
        (  # the model made float32: a float16 model is converted (round 2)
            _PREDICT.replace("    return model(", "    model.float()\n    return model("),
            _NORMED + _W,
        ),
        (  # the same by Module.to: a change of dtype, not a move
            _PREDICT.replace("    return model(", "    model.to(torch.float32)\n    return model("),
            "BatchNorm1d in eval) on cpu, torch.int64 x on cpu)" + _W,
        ),
        (  # the buffers changed (round 2): BatchNorm's running statistics
            _PREDICT.replace(
                "    return model(", "    for b in model.buffers():\n        b.add_(1.0)\n    return model("
            ),
            _NORMED + " changed",
        ),
        (  # run twice: a BatchNorm in train mode updates its statistics twice
            _PREDICT.replace(
                "    return model(", "    model(x.to(next(model.parameters()).device))\n    return model("
            ),
            _NORMED + " changed",
        ),
        (  # a backward pass: gradients left in .grad for the next optimizer step (round 2)
            "def predict(model, x):\n"
            "    out = model(x.to(next(model.parameters()).device))\n"
            "    if out.is_floating_point() and out.device.type != 'meta':\n"
            "        out.sum().backward()\n"
            "    return out",
            _TANH + _W,
        ),
        (  # the gradients cleared after the forward pass (round 3): the checker's models have them in .grad
            _PREDICT.replace("    return model(", "    out = model(") + "\n    model.zero_grad()\n    return out",
            _TANH + _W,
        ),
        (
            _PREDICT.replace("    return model(", "    out = model(")
            + "\n    for p in model.parameters():\n        p.grad = None\n    return out",
            _TANH + _W,
        ),
        (  # eval mode for the call, each module's mode put back (round 3): a BatchNorm in train mode gives other output
            "def predict(model, x):\n"
            "    modes = [m.training for m in model.modules()]\n"
            "    model.eval()\n"
            "    try:\n"
            "        return model(x.to(next(model.parameters()).device))\n"
            "    finally:\n"
            "        for m, mode in zip(model.modules(), modes):\n"
            "            m.training = mode",
            _NORMED + " returned a torch.float16 tensor of shape (4, 3, 2) on cpu of other values; expected model(x) "
            "on the model's device, each module in its own mode",
        ),
    ),
    2: (
        (  # reads every loss back to the host, then builds a tensor of the mean
            _EPOCH.replace("losses.append(loss.detach())", "losses.append(loss.item())").replace(
                "torch.stack(losses).mean()", "torch.tensor(sum(losses) / len(losses), device=device)"
            ),
            "train_epoch(model on cpu, SGD, X and y of 36 rows, 12) read values on the host (.item(), 3 time(s))",
        ),
        (
            _EPOCH.replace("losses.append(loss.detach())", "losses.append(float(loss))").replace(
                "torch.stack(losses).mean()", "torch.tensor(losses, device=device).mean()"
            ),
            "read values on the host (float(), 3 time(s))",
        ),
        (  # prints each loss: a read too
            _EPOCH.replace("        losses.append(", "        print(loss)\n        losses.append("),
            "read values on the host (.__repr__(), 3 time(s))",
        ),
        (  # returns a float
            _EPOCH.replace("torch.stack(losses).mean()", "torch.stack(losses).mean().tolist()"),
            "read values on the host (.tolist(), 1 time(s))",
        ),
        (  # a batch size of its own
            _EPOCH.replace("split(batch_size)", "split(8)"),
            "train_epoch(model on cpu, SGD, X and y of 36 rows, 12) ran the model 5 times; expected 3 batches",
        ),
        (  # drops the short last batch
            _EPOCH.replace(_LOOP, "    for s in range(0, len(X) - batch_size + 1, batch_size):\n")
            .replace("        loss = nn.functional.mse_loss(model(xb), yb)\n", "")
            .replace(
                "        loss.backward()\n",
                "        xb, yb = X[s : s + batch_size].to(device), y[s : s + batch_size].to(device)\n"
                "        loss = nn.functional.mse_loss(model(xb), yb)\n        loss.backward()\n",
            ),
            "train_epoch(model on cpu, SGD, X and y of 30 rows, 12) ran the model 2 times; expected 3",
        ),
        (  # shuffles, as section 4's loop does: the question asks for the rows in order
            _EPOCH.replace(
                _LOOP,
                "    order = torch.randperm(len(X))\n    X, y = X[order], y[order]\n" + _LOOP,
            ),
            "fed the model, as batch 1, a torch.float32 tensor of shape (12, 4) on cpu of other values; expected X's",
        ),
        (  # forgets zero_grad: the gradients pile up from batch to batch (named since round 5)
            _EPOCH.replace("        optimizer.zero_grad()\n", ""),
            "the weights differ from one SGD step per batch of mean squared error: the gradients piled up: clear them "
            "after each step",
        ),
        (  # two steps a batch (round 5)
            _EPOCH.replace("        optimizer.step()\n", "        optimizer.step()\n        optimizer.step()\n"),
            "train_epoch(model on cpu, SGD, X and y of 36 rows, 12) stepped the optimizer given 6 times, not once per "
            "batch (3)",
        ),
        (  # one step for the epoch, on the gradients of every batch (round 5)
            _EPOCH.replace("        optimizer.step()\n        optimizer.zero_grad()\n", "").replace(
                "    return", "    optimizer.step()\n    optimizer.zero_grad()\n    return"
            ),
            "train_epoch(model on cpu, SGD, X and y of 36 rows, 12) stepped the optimizer given 1 times, not once per "
            "batch (3)",
        ),
        (  # another loss
            _EPOCH.replace("nn.functional.mse_loss", "nn.functional.l1_loss"),
            "the weights differ from one SGD step per batch of mean squared error",
        ),
        (  # leaves the data on the CPU: fine there, the device error elsewhere
            _EPOCH.replace("X.to(device).split", "X.split").replace("y.to(device).split", "y.split"),
            "Tensor on device meta is not on the expected device cpu",
        ),
        (  # section 4's mean over rows: with a short last batch it is not the mean of the batches' losses
            _EPOCH.replace("losses.append(loss.detach())", "losses.append(loss.detach() * len(xb))").replace(
                "torch.stack(losses).mean()", "torch.stack(losses).sum() / len(X)"
            ),
            "train_epoch(model on cpu, SGD, X and y of 30 rows, 12) returned 0.324661; expected 0.318094, the mean of "
            "the batches' losses: that is the mean over rows",
        ),
        (  # the last batch's loss, not the mean
            _EPOCH.replace("torch.stack(losses).mean()", "losses[-1]"),
            "expected 0.",
        ),
        (  # the mean as a float on the host
            _EPOCH.replace("torch.stack(losses).mean()", "sum(losses).item() / len(losses)"),
            "read values on the host (.item(), 1 time(s))",
        ),
        (  # a tensor made from the list of losses: torch.tensor reads each one to the host
            _EPOCH.replace("torch.stack(losses).mean()", "torch.tensor(losses, device=device).mean()"),
            "train_epoch(model on cpu, SGD, X and y of 36 rows, 12) read values on the host (torch.tensor(a sequence "
            "of tensors), 3 time(s))",
        ),
        (
            _EPOCH.replace("losses.append(loss.detach())", "losses.append(torch.as_tensor([loss.detach()]))").replace(
                "torch.stack(losses).mean()", "torch.cat(losses).mean()"
            ),
            "read values on the host (torch.as_tensor(a sequence of tensors), 3 time(s))",
        ),
        (  # stops at a NaN: each test reads the loss
            _EPOCH.replace(
                "        loss.backward()\n",
                "        if bool(torch.isnan(loss)):\n            break\n        loss.backward()\n",
            ),
            "read values on the host (bool(), 3 time(s))",
        ),
        (  # the largest loss: max compares them on the host
            _EPOCH.replace("torch.stack(losses).mean()", "torch.stack(losses).mean() + 0 * max(losses)"),
            "read values on the host (bool(), 2 time(s))",
        ),
        (  # an Adam of its own: the optimizer given takes no step (and Adam's reads of its step count are no loss's)
            _EPOCH.replace(
                "    losses = []\n", "    losses = []\n    optimizer = torch.optim.Adam(model.parameters())\n"
            ),
            "train_epoch(model on cpu, SGD, X and y of 36 rows, 12) stepped the optimizer given 0 times, not once per "
            "batch (3)",
        ),
        (  # the model moved to the data
            _EPOCH.replace(
                "    device = next(model.parameters()).device\n", "    device = X.device\n    model.to(device)\n"
            ),
            "train_epoch(model on meta, SGD, X and y of 30 rows, 12) moved the model (or tried to): leave it on meta, "
            "and move the data there",
        ),
        (  # the losses kept with their graphs
            _EPOCH.replace("losses.append(loss.detach())", "losses.append(loss)"),
            "returned a torch.float32 tensor of shape () on cpu; expected the mean loss, detached, one number on cpu",
        ),
        (  # clears the gradients between backward and step: every step finds none
            _EPOCH.replace(
                "        optimizer.step()\n        optimizer.zero_grad()\n",
                "        optimizer.zero_grad()\n        optimizer.step()\n",
            ),
            "after train_epoch(model on cpu, SGD, X and y of 36 rows, 12) the weights differ from one SGD step per "
            "batch of mean squared error: they are the starting weights: no step changed them",
        ),
        (  # normalises X in place
            _EPOCH.replace("    losses = []\n", "    X -= X.mean(0)\n    losses = []\n"),
            "changed its arguments",
        ),
    ),
    3: (
        (  # checks the values it loaded (round 5): meta has none, and the message names the device passed
            "def load_on(path, device):\n"
            "    state = torch.load(path, map_location=device, weights_only=True)\n"
            "    assert all(bool(v.isfinite().all()) for v in state.values())\n"
            "    return state",
            "load_on(path, torch.device('meta')) raised RuntimeError (line 3 of your code): Tensor.item() cannot be "
            "called on meta tensors",
        ),
        (
            "def load_on(path, device):\n    return torch.load(path)",
            "Attempting to deserialize object on",
        ),
        (  # loads where it was saved, then moves: a checkpoint from a GPU this machine lacks does not load
            "def load_on(path, device):\n"
            "    state = torch.load(path, weights_only=True)\n"
            "    return {key: value.to(device) for key, value in state.items()}",
            "Attempting to deserialize object on",
        ),
        (  # only the tensors saved on the first GPU are mapped (round 2)
            "def load_on(path, device):\n    return torch.load(path, map_location={'cuda:0': str(device)})",
            "Attempting to deserialize object on",
        ),
        (  # a hard-coded map of the usual places (round 3): the file has a tensor from a GPU of an unusual number
            "def load_on(path, device):\n"
            "    places = {'cpu': str(device), 'cuda:0': str(device), 'cuda:1': str(device)}\n"
            "    return torch.load(path, map_location=places, weights_only=True)",
            "Attempting to deserialize object on",
        ),
        (  # a fixed list of GPU slots (round 6): the unusual GPU's number is past any usual machine's
            "def load_on(path, device):\n"
            "    places = {f'cuda:{i}': str(device) for i in range(16)} | {'cpu': str(device)}\n"
            "    return torch.load(path, map_location=places, weights_only=True)",
            "Attempting to deserialize object on",
        ),
        (  # only the tensors saved on the CPU are mapped
            "def load_on(path, device):\n"
            "    return torch.load(path, map_location={'cpu': str(device)}, weights_only=True)",
            "Attempting to deserialize object on",
        ),
        (
            "def load_on(path, device):\n    return nn.Linear(3, 1).to(device).state_dict()",
            "expected the state dict, a dict with keys",
        ),
        (  # every tensor made float32 on the way
            "def load_on(path, device):\n"
            "    state = torch.load(path, map_location=device, weights_only=True)\n"
            "    return {k: v.to(device, torch.float32) for k, v in state.items()}",
            "load_on(path, torch.device('cpu'))['0.weight'] is a torch.float32 tensor of shape (2, 3) on cpu; expected "
            "the saved tensor there, a torch.float16 tensor",
        ),
        (  # the CPU hard-coded
            "def load_on(path, device):\n    return torch.load(path, map_location='cpu', weights_only=True)",
            "load_on(path, torch.device('meta'))['0.weight'] is a torch.float16 tensor of shape (2, 3) on cpu; "
            "expected the saved tensor there, a torch.float16 tensor of shape (2, 3) on meta",
        ),
        (  # a model instead of its state dict
            "def load_on(path, device):\n"
            "    model = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))\n"
            "    model.load_state_dict(torch.load(path, map_location=device, weights_only=True))\n"
            "    return model",
            "returned Sequential(",
        ),
    ),
    4: (
        (  # no autocast: the scaler alone does not make anything 16-bit
            _AMP.replace(
                "    with torch.autocast(device_type=device.type, dtype=low_precision(device)):\n", ""
            ).replace("        loss =", "    loss ="),
            "amp_step(model on cpu, SGD(lr=0.5), GradScaler(2**16), x, y=(1.5, -1.5, 1.5, 0)) ran the model without "
            "autocast; "
            "expected autocast in torch.bfloat16 on cpu",
        ),
        (  # steps with the scaled gradients, every update `scale` times too large: told by the scaler's calls
            _AMP.replace("scaler.step(optimizer)", "optimizer.step()").replace("    scaler.update()\n", ""),
            "amp_step(model on cpu, SGD(lr=0.5), GradScaler(2**16), x, y=(1.5, -1.5, 1.5, 0)) never called "
            "scaler.step on the scaler given: backward and step go through it",
        ),
        (  # forgets update(): the scale never adapts
            _AMP.replace("    scaler.update()\n", ""),
            "left the scale at 65536: the scaler given updates it after each step",
        ),
        (  # float16 on the CPU
            _AMP.replace("dtype=low_precision(device)", "dtype=torch.float16"),
            "ran the model under autocast in torch.float16; expected autocast in torch.bfloat16 on cpu",
        ),
        (  # the device type hard-coded: autocast for CUDA does nothing on the CPU
            _AMP.replace("device_type=device.type", "device_type='cuda'"),
            "ran the model without autocast",
        ),
        (  # unscales, then steps the optimizer itself: a step whose gradients overflowed is not skipped
            _AMP.replace("    scaler.step(optimizer)\n", "    scaler.unscale_(optimizer)\n    optimizer.step()\n"),
            "amp_step(model on cpu, SGD(lr=0.5), GradScaler(2**16), x, y=(1.5, -1.5, 1.5, 0)) never called "
            "scaler.step on the scaler given",
        ),
        (  # the same, skipping the step itself where a gradient overflowed (round 3): the step bypasses the scaler
            _AMP.replace(
                "    scaler.step(optimizer)\n",
                "    scaler.unscale_(optimizer)\n"
                "    if all(bool(p.grad.isfinite().all()) for p in model.parameters()):\n"
                "        optimizer.step()\n",
            ),
            "amp_step(model on cpu, SGD(lr=0.5), GradScaler(2**16), x, y=(1.5, -1.5, 1.5, 0)) never called "
            "scaler.step on the scaler given: backward and step go through it",
        ),
        (  # no scaler at all (round 3)
            _AMP.replace("scaler.scale(loss).backward()", "loss.backward()")
            .replace("scaler.step(optimizer)", "optimizer.step()")
            .replace("    scaler.update()\n", ""),
            "never called scaler.scale or scaler.step on the scaler given: backward and step go through it",
        ),
        (  # returns the scaled loss
            _AMP.replace("scaler.scale(loss).backward()", "scaled = scaler.scale(loss)\n    scaled.backward()").replace(
                "return loss.detach()", "return scaled.detach()"
            ),
            "returned 110592; expected the loss, 1.6875: that is the scaled value",
        ),
        (  # forgets zero_grad
            _AMP.replace("    optimizer.zero_grad()\n", ""),
            "left gradients in .grad after the step",
        ),
        (  # clears the gradients before the step, as many loops do: they are left alive after it
            _AMP.replace("    optimizer.zero_grad()\n", "").replace(
                "    device = next", "    optimizer.zero_grad()\n    device = next"
            ),
            "left gradients in .grad after the step",
        ),
        (  # a scaler of its own: the one given scales nothing
            _AMP.replace(
                "    scaler.scale(loss)", "    scaler = torch.amp.GradScaler(device.type)\n    scaler.scale(loss)"
            ),
            "amp_step(model on cpu, SGD(lr=0.5), GradScaler(2**16), x, y=(1.5, -1.5, 1.5, 0)) never called "
            "scaler.scale or scaler.step on the scaler given",
        ),
        (  # section 6's clip copied in: where the gradients' norm is over 1 the step is not the one asked for (round 2)
            _AMP.replace(
                "    scaler.step(",
                "    scaler.unscale_(optimizer)\n    nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
                "    scaler.step(",
            ),
            "amp_step(model on cpu, SGD(lr=0.5), GradScaler(2**16), x, y=(1.5, -1.5, 1.5, 0)) the weights differ "
            "from one SGD step: "
            "they are a step clipped to norm 1 (section 6): clip nothing",
        ),
        (  # moves the data in place of a copy
            _AMP.replace("    device =", "    x.mul_(1.0).add_(1.0)\n    device ="),
            "amp_step(model on cpu, SGD(lr=0.5), GradScaler(2**16), x, y=(1.5, -1.5, 1.5, 0)) changed x or y (values, "
            "dtype or requires_grad): move copies, leave them as they were",
        ),
        (  # the caller's x made to require gradients (round 6)
            _AMP.replace("    device =", "    x.requires_grad_(True)\n    device ="),
            "changed x or y (values, dtype or requires_grad)",
        ),
        (  # the model made bfloat16 for the step (round 6): mixed precision keeps float32 weights
            _AMP.replace("    with torch.autocast", "    model.to(low_precision(device))\n    with torch.autocast"),
            "amp_step(model on cpu, SGD(lr=0.5), GradScaler(2**16), x, y=(1.5, -1.5, 1.5, 0)) made the model's weights "
            "torch.bfloat16: mixed precision keeps them float32",
        ),
        (  # the same, made float32 again after the step (round 6): the forward pass saw bfloat16 weights
            _AMP.replace(
                "    with torch.autocast", "    model.to(low_precision(device))\n    with torch.autocast"
            ).replace("    return loss", "    model.float()\n    return loss"),
            "made the model's weights torch.bfloat16: mixed precision keeps them float32",
        ),
    ),
    5: (
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
        "def predict(model, x):\n"
        "    with torch.no_grad():\n"
        "        return model(x.to(next(model.parameters()).device))",
        "def predict(model, x):\n    return model(x.to(device=next(model.buffers(), next(model.parameters())).device))",
        "def predict(model, x):\n    return model(x.to(next(iter(model.state_dict().values())).device))",
        # a copy run on the model's device: the model's BatchNorm statistics are left as they were
        "import copy\n\ndef predict(model, x):\n    return copy.deepcopy(model)(x.to(next(model.parameters()).device))",
    ),
    2: (
        "def train_epoch(model, optimizer, X, y, batch_size):\n"
        "    device = next(model.parameters()).device\n"
        "    X, y = X.to(device, non_blocking=True), y.to(device, non_blocking=True)\n"
        "    total, count = torch.zeros((), device=device), 0\n"
        "    for xb, yb in zip(X.split(batch_size), y.split(batch_size)):\n"
        "        optimizer.zero_grad(set_to_none=True)\n"
        "        loss = ((model(xb) - yb) ** 2).mean()\n"
        "        loss.backward()\n"
        "        optimizer.step()\n"
        "        total += loss.detach()\n"
        "        count += 1\n"
        "    return total / count",
        # slices, the losses kept in a preallocated tensor, nn.MSELoss
        "def train_epoch(model, optimizer, X, y, batch_size):\n"
        "    device = next(model.parameters()).device\n"
        "    X, y = X.to(device), y.to(device)\n"
        "    starts = range(0, len(X), batch_size)\n"
        "    losses = torch.empty(len(starts), device=device)\n"
        "    loss_fn = nn.MSELoss()\n"
        "    for i, s in enumerate(starts):\n"
        "        loss = loss_fn(model(X[s : s + batch_size]), y[s : s + batch_size])\n"
        "        loss.backward()\n"
        "        optimizer.step()\n"
        "        optimizer.zero_grad()\n"
        "        losses[i] = loss.detach()\n"
        "    return losses.mean()",
        # a DataLoader, not shuffled, moving each batch; a tensor of shape (1,)
        "from torch.utils.data import DataLoader, TensorDataset\n\n"
        "def train_epoch(model, optimizer, X, y, batch_size):\n"
        "    device = next(model.parameters()).device\n"
        "    losses = []\n"
        "    for xb, yb in DataLoader(TensorDataset(X, y), batch_size=batch_size):\n"
        "        loss = nn.functional.mse_loss(model(xb.to(device)), yb.to(device))\n"
        "        optimizer.zero_grad()\n"
        "        loss.backward()\n"
        "        optimizer.step()\n"
        "        losses.append(loss.detach())\n"
        "    return torch.stack(losses).mean().reshape(1)",
        # the sum of 0-d tensors is a tensor on their device
        _EPOCH.replace("torch.stack(losses).mean()", "sum(losses) / len(losses)"),
        # host reads of tensors that do not come from the model (round 6): the batch count, unused numbers
        "def train_epoch(model, optimizer, X, y, batch_size):\n"
        "    device = next(model.parameters()).device\n"
        "    X, y = X.to(device), y.to(device)\n"
        "    nb = int(torch.tensor(len(X) / batch_size).ceil())\n"
        "    unused = float(torch.tensor(2.5)), torch.linspace(0, 1, 3).tolist()\n"
        "    losses = []\n"
        "    for i in range(nb):\n"
        "        xb, yb = X[i * batch_size : (i + 1) * batch_size], y[i * batch_size : (i + 1) * batch_size]\n"
        "        loss = nn.functional.mse_loss(model(xb), yb)\n"
        "        loss.backward()\n"
        "        optimizer.step()\n"
        "        optimizer.zero_grad()\n"
        "        losses.append(loss.detach())\n"
        "    return torch.stack(losses).mean()",
    ),
    3: (
        "def load_on(path, device):\n    return torch.load(str(path), map_location=str(device))",
        # loaded to the CPU first, then moved
        "def load_on(path, device):\n"
        "    state = torch.load(path, map_location='cpu', weights_only=True)\n"
        "    return {key: value.to(device) for key, value in state.items()}",
    ),
    4: (
        # the loss outside autocast (mse_loss runs in float32 under autocast anyway; the words ask autocast for the
        # forward pass and allow the loss either side), returned as a float
        _AMP.replace("        loss = nn.functional.mse_loss(model(x), y)\n", "        out = model(x)\n")
        .replace("    scaler.scale(loss)", "    loss = nn.functional.mse_loss(out.float(), y)\n    scaler.scale(loss)")
        .replace("return loss.detach()", "return loss.item()"),
        # backward inside the autocast block: backward ops run in the forward's dtypes anyway (torch's AMP docs
        # advise against it, but the step is the same, and the words do not ask for it)
        _AMP.replace("    scaler.scale(loss).backward()", "        scaler.scale(loss).backward()"),
        # autocast's dtype given positionally
        _AMP.replace("device_type=device.type, dtype=low_precision(device)", "device.type, low_precision(device)"),
    ),
    5: (
        _CLIP.replace("return norm", "return norm.item()"),  # a float for the log
        _CLIP.replace("max_norm)", "max_norm, foreach=True)"),
        _CLIP.replace("model.parameters(), max_norm", "optimizer.param_groups[0]['params'], max_norm"),
    ),
}

#: Round 9's findings: autocast left on for the session (named and set back by check()); the loss saved every batch
WRONG_ANSWERS[1] += (
    (
        "def predict(model, x):\n    torch.autocast('cpu').__enter__()\n"
        "    return model(x.to(next(model.parameters()).device))",
        "changed torch's autocast (on only in `with torch.autocast(...):`)",
    ),
)
WRONG_ANSWERS[2] += tuple(
    (
        SOLUTIONS[2].replace(
            "        losses.append(loss.detach())\n", f"        losses.append(loss.detach())\n{save}\n"
        ),
        "read values on the host (.untyped_storage(), ",
    )
    for save in (
        "        import io; torch.save(loss.detach(), io.BytesIO())",
        "        import pickle; pickle.dumps(model.state_dict())",
    )
)
WRONG_ANSWERS[1] += (
    (
        "def predict(model, x):\n    torch.set_autocast_dtype('cpu', torch.float16)\n"
        "    return model(x.to(next(model.parameters()).device))",
        "changed torch's autocast (on only in `with torch.autocast(...):`)",
    ),
)

#: Round 11's findings: autocast's default dtype (bfloat16 on the CPU, as low_precision gives there), and a second step
WRONG_ANSWERS[4] += (
    (
        _AMP.replace("device_type=device.type, dtype=low_precision(device)", "device.type"),
        "ran the model under autocast in torch.float16; expected autocast in torch.bfloat16 on cpu: "
        "dtype=low_precision(device) (autocast's default varies)",
    ),
    (
        _AMP.replace("dtype=low_precision(device)", "dtype=torch.get_autocast_dtype(device.type)"),
        "ran the model under autocast in torch.float16; expected autocast in torch.bfloat16 on cpu",
    ),
    (
        _AMP.replace("    optimizer.zero_grad()\n", "    scaler.step(optimizer)\n    optimizer.zero_grad()\n"),
        "called scaler.step 2 times: step the optimizer once",
    ),
)
WRONG_ANSWERS[5] += (
    (
        SOLUTIONS[5].replace("    optimizer.zero_grad()\n", "    scaler.step(optimizer)\n    optimizer.zero_grad()\n"),
        "called scaler.step 2 times: step the optimizer once",
    ),
)
#: Round 12: the targets cast to the 16-bit type, and the loss computed in it after the block (accepted before: every
#: y was exact in 16 bits)
WRONG_ANSWERS[4] += (
    (
        _AMP.replace(
            "    x, y = x.to(device), y.to(device)\n", "    x, y = x.to(device), y.to(device, low_precision(device))\n"
        ),
        "y=(0.1, 1/3, -0.7, 0.2)) returned 0.162638; expected the loss, 0.162778",
    ),
    (
        _AMP.replace("        loss = nn.functional.mse_loss(model(x), y)\n", "        out = model(x)\n").replace(
            "    scaler.scale(loss)", "    loss = nn.functional.mse_loss(out, y.to(out.dtype))\n    scaler.scale(loss)"
        ),
        "y=(0.1, 1/3, -0.7, 0.2)) returned 0.162109; expected the loss, 0.162778",
    ),
)
#: Round 13: a log of the loss every 10th batch (never fired in 3 batches), and x cast to the 16-bit type
WRONG_ANSWERS[2] += (
    (
        "def train_epoch(model, optimizer, X, y, batch_size):\n"
        "    device = next(model.parameters()).device\n"
        "    X, y = X.to(device), y.to(device)\n"
        "    losses = []\n"
        "    for i, start in enumerate(range(0, len(X), batch_size)):\n"
        "        loss = nn.functional.mse_loss(model(X[start:start + batch_size]), y[start:start + batch_size])\n"
        "        loss.backward()\n"
        "        optimizer.step()\n"
        "        optimizer.zero_grad()\n"
        "        losses.append(loss.detach())\n"
        "        if (i + 1) % 10 == 0:\n"
        '            print(f"batch {i + 1}: loss {loss.item():.4f}")\n'
        "    return torch.stack(losses).mean()",
        "train_epoch(model on cpu, SGD, X and y of 101 rows, 1) read values on the host (.item(), 10 time(s))",
    ),
)
WRONG_ANSWERS[4] += (
    (
        _AMP.replace(
            "    x, y = x.to(device), y.to(device)\n", "    x, y = x.to(device, low_precision(device)), y.to(device)\n"
        ),
        "fed the model x in torch.bfloat16: leave x float32 (autocast casts inside the block)",
    ),
)
#: Round 14: host reads in other spellings, every 10th batch (accepted before: numpy, a comparison, a copy to the host)
_EVERY_10TH = WRONG_ANSWERS[2][-1][0].replace('            print(f"batch {i + 1}: loss {loss.item():.4f}")\n', "{}")
WRONG_ANSWERS[2] += tuple(
    (_EVERY_10TH.format(f"            {read}\n"), f"read values on the host ({said}, ")
    for read, said in (
        ("import numpy; numpy.asarray(loss.detach())", ".__array__()"),
        ("assert not torch.equal(losses[-1], losses[-2])", ".equal()"),
        ("torch.is_nonzero(torch.isnan(loss))", ".is_nonzero()"),
        ("kept = loss.detach().cpu()", ".cpu()"),
    )
)
#: Round 15: a tensor made by X.new_tensor or X.new from a list of losses reads each one (accepted before)
WRONG_ANSWERS[2] += tuple(
    (
        SOLUTIONS[2].replace("torch.stack(losses).mean()", f"X.{made}(losses).mean()"),
        f"({made}(a sequence of tensors), 3 time(s))",
    )
    for made in ("new_tensor", "new")
)
#: Round 16: a tensor made from a tuple, a nested list, a deque or a list of tuples of losses (only a flat list was
#: counted); several spellings of a read are each named once, a read of a copy `.cpu()` made is no other read
WRONG_ANSWERS[2] += tuple(
    (
        "from collections import deque\n\n" + SOLUTIONS[2].replace("torch.stack(losses).mean()", f"{made}.mean()"),
        f"({said}(a sequence of tensors), 3 time(s))",
    )
    for made, said in (
        ("X.new_tensor(tuple(losses))", "new_tensor"),
        ("X.new([losses])", "new"),
        ("torch.tensor([(l,) for l in losses], device=X.device)", "torch.tensor"),
        ("torch.as_tensor(deque(losses), device=X.device)", "torch.as_tensor"),
        ("torch.asarray(tuple(losses), device=X.device)", "torch.asarray"),
    )
)
WRONG_ANSWERS[2] += (
    (
        SOLUTIONS[2].replace(
            "losses.append(loss.detach())",
            "losses.append(loss.detach())\n        kept = loss.detach().cpu(), loss.detach().tolist()",
        ),
        "read values on the host (.cpu(), 3 time(s))",  # .tolist() of the storage .cpu() returned on a CPU: free
    ),
)
#: Round 17: a sequence class of the learner's own (only len and indices), and losses wrapped as Parameters, built
#: into a tensor (torch reads each; only known sequence types and tensors made by recorded calls were counted)
WRONG_ANSWERS[2] += (
    (
        OWN_SEQUENCE + SOLUTIONS[2].replace("torch.stack(losses).mean()", "X.new_tensor(Losses(losses)).mean()"),
        "(new_tensor(a sequence of tensors), 3 time(s))",
    ),
    (
        SOLUTIONS[2]
        .replace("losses.append(loss.detach())", "losses.append(nn.Parameter(loss.detach(), requires_grad=False))")
        .replace("torch.stack(losses).mean()", "torch.tensor(losses, device=X.device).mean()"),
        "(torch.tensor(a sequence of tensors), 3 time(s))",
    ),
)
#: Round 19: a number set through a boolean mask reads nothing (masked_fill with a host number; refused before)
RIGHT_ANSWERS[2] += (
    SOLUTIONS[2].replace(
        "    return torch.stack(losses).mean()",
        "    stacked = torch.stack(losses)\n    stacked[torch.isnan(stacked)] = 0.0\n    return stacked.mean()",
    ),
)
#: Round 20: a tensor built from a numpy scalar (a host number) crashed the checker; numpy's mean of .numpy() reads
RIGHT_ANSWERS[2] += (
    "import numpy as np\n\n"
    + SOLUTIONS[2].replace(
        "torch.stack(losses).mean()",
        "torch.stack(losses).sum() / torch.tensor(np.float32(len(losses)), device=X.device)",
    ),
)
WRONG_ANSWERS[2] += (
    (
        "import numpy as np\n\n"
        + SOLUTIONS[2].replace(
            "torch.stack(losses).mean()", "torch.as_tensor(np.mean([l.numpy() for l in losses]), device=X.device)"
        ),
        "read values on the host (.numpy(), 3 time(s))",
    ),
)
