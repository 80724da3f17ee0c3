//! What a run trains: a [`Net`] (an MLP or a CIFAR ResNet) built from its
//! [`ntk_model::NetSpec`].

use ntk_model::Net;

/// The network a run trains.
pub type Model = Net;
