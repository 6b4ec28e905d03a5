# Writes OUTPUT: a C++ fragment with one {module name, source text} entry per
# file in SOURCES, for the frontend to compile and run in the embedded
# interpreter. Run as `cmake -DOUTPUT=... -DSOURCES=a.py;b.py -P this`.
set(content "// Generated from the frontend's Python sources; do not edit.\n")
foreach(source IN LISTS SOURCES)
  get_filename_component(module "${source}" NAME_WE)
  file(READ "${source}" text)
  # Raw string literals cannot contain their own delimiter; none of ours do.
  string(APPEND content "{\"dync_${module}\", R\"dync_py(${text})dync_py\"},\n")
endforeach()
file(WRITE "${OUTPUT}.tmp" "${content}")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
