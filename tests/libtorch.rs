//! Proof that the linked libtorch works: a small `tch` net runs forward and backward, learns,
//! and its weights survive a save/load round trip bit for bit.

use tch::nn::{self, Module, OptimizerConfig};
use tch::{Device, Kind, Tensor};

fn mlp(vs: &nn::Path) -> impl Module {
    nn::seq()
        .add(nn::linear(vs / "l1", 8, 16, Default::default()))
        .add_fn(|x| x.relu())
        .add(nn::linear(vs / "l2", 16, 1, Default::default()))
}

fn data() -> (Tensor, Tensor) {
    tch::manual_seed(7);
    let x = Tensor::randn([32, 8], (Kind::Float, Device::Cpu));
    let y = x.sum_dim_intlist(1, true, Kind::Float).sin();
    (x, y)
}

#[test]
fn forward_backward_and_training_reduce_the_loss() {
    let (x, y) = data();
    let vs = nn::VarStore::new(Device::Cpu);
    let net = mlp(&vs.root());
    let out = net.forward(&x);
    assert_eq!(out.size(), vec![32, 1]);

    let loss = (net.forward(&x) - &y).square().mean(Kind::Float);
    loss.backward();
    let grads: Vec<f64> = vs
        .trainable_variables()
        .iter()
        .map(|v| f64::try_from(v.grad().abs().sum(Kind::Float)).unwrap())
        .collect();
    assert_eq!(grads.len(), 4, "two weights and two biases");
    assert!(grads.iter().all(|g| g.is_finite() && *g > 0.0), "gradients: {grads:?}");

    let mut opt = nn::Adam::default().build(&vs, 1e-2).unwrap();
    let first = f64::try_from(&loss).unwrap();
    let mut last = first;
    for _ in 0..100 {
        let loss = (net.forward(&x) - &y).square().mean(Kind::Float);
        opt.backward_step(&loss);
        last = f64::try_from(&loss).unwrap();
    }
    assert!(last < first * 0.5, "loss went from {first} to {last}");
}

#[test]
fn weights_round_trip_through_safetensors_and_libtorch_files() {
    let (x, _) = data();
    let dir = tempfile::tempdir().unwrap();
    let vs = nn::VarStore::new(Device::Cpu);
    let net = mlp(&vs.root());
    let expected = net.forward(&x);
    for name in ["w.safetensors", "w.ot"] {
        let path = dir.path().join(name);
        vs.save(&path).unwrap();
        let mut fresh = nn::VarStore::new(Device::Cpu);
        let reloaded = mlp(&fresh.root());
        assert!(!reloaded.forward(&x).equal(&expected), "fresh weights must differ at first");
        fresh.load(&path).unwrap();
        assert!(reloaded.forward(&x).equal(&expected), "outputs differ after loading {name}");
    }
}
