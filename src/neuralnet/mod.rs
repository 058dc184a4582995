//! The policy/value network on libtorch (`tch`).
