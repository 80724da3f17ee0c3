//! ntk-model's integration tests, one binary (each file a module): the activations'
//! constants and derivatives, their CUDA forms (as C), the MLP, the CIFAR ResNets, and weights out and in.

mod activation;
mod cuda_forms;
mod export;
mod mlp;
mod resnet;
