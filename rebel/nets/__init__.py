"""Value and policy nets: the torch MLPs and its conversion to the weights format, the torch-free weights
format, the native kernels' precision, torch device helpers and the nets shipped with the
package (:mod:`rebel.nets.pretrained`)."""
