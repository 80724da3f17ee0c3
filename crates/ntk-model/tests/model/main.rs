//! ntk-model's integration tests, one binary (each file a module): the activations'
//! constants and derivatives, the MLP, the CIFAR ResNets, and weights out and in.

mod activation;
mod export;
mod mlp;
mod resnet;
