# aware_include_root(TARGET FOLDER): gives TARGET the include root of FOLDER
# (a path from the repository root such as `core` or `sim/analytic`), PUBLIC.
#
# Headers are named from the repository root (`#include "core/op_graph.h"`), so
# giving every target the root itself would let any file include any folder's
# headers, whatever it links. Instead each folder gets a root of its own under
# the build tree that holds one link, FOLDER -> the source folder: a target sees
# its own folder's headers and those of the targets it links (their roots come
# with them as usage requirements), nothing else. An include of a folder the
# target does not link fails to compile. tests/layering checks the direction of
# every include against docs/architecture.md on top of this.
function(aware_include_root target folder)
  string(REPLACE "/" "+" key "${folder}")
  set(root "${PROJECT_BINARY_DIR}/include-roots/${key}")
  set(link "${root}/${folder}")
  get_filename_component(parent "${link}" DIRECTORY)
  file(MAKE_DIRECTORY "${parent}")
  if(NOT IS_SYMLINK "${link}")
    file(CREATE_LINK "${PROJECT_SOURCE_DIR}/${folder}" "${link}" SYMBOLIC)
  endif()
  target_include_directories(${target} PUBLIC "${root}")
endfunction()
