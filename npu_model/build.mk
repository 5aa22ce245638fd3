# npu_model/: the simulated Ascend stack (libraries, npu-modeld, npu_train).
# Owned by the npu_model work; see npu_model/README.md.
