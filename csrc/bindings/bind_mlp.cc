// Placeholder: replaced by the real bindings for this area.
#include <pybind11/pybind11.h>
namespace rebel_bindings {
void bind_mlp(pybind11::module_& /*m*/) {}
}  // namespace rebel_bindings
