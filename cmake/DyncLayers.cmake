# dync's libraries and the layering between them.
#
# Each folder of C++ sources is one library (or executable) declared with
# dync_library / dync_declare_layer: its folders, its sources, and the dync
# libraries it depends on. The dependencies are both what it links and the
# only folders its sources may include from (with their own dependencies,
# transitively): dync_check_layering() adds a step every target waits for
# that fails the build on an #include across the layering, naming the file,
# the line and the declaration to change (utils/check-layering.py).

# Records \p name's folders (relative to the source root), the layers it
# depends on, the layers whose headers it uses without linking them, and, for
# a library, its sources (so a source file left out of the list is reported,
# not silently unbuilt).
function(dync_declare_layer name)
  cmake_parse_arguments(ARG "" "" "FOLDERS;DEPENDS;USES_HEADERS_OF;SOURCES" ${ARGN})
  set_property(GLOBAL APPEND PROPERTY DYNC_LAYERS ${name})
  set_property(GLOBAL PROPERTY DYNC_LAYER_${name}_FOLDERS ${ARG_FOLDERS})
  set_property(GLOBAL PROPERTY DYNC_LAYER_${name}_DEPENDS ${ARG_DEPENDS} ${ARG_USES_HEADERS_OF})
  set(sources "")
  foreach(source IN LISTS ARG_SOURCES)
    if(NOT IS_ABSOLUTE ${source})
      set(source ${CMAKE_CURRENT_SOURCE_DIR}/${source})
    endif()
    file(RELATIVE_PATH source ${PROJECT_SOURCE_DIR} ${source})
    list(APPEND sources ${source})
  endforeach()
  set_property(GLOBAL PROPERTY DYNC_LAYER_${name}_SOURCES ${sources})
endfunction()

# A static library of dync's own: its sources (relative to the current
# folder), the dync libraries it links (DEPENDS), other libraries it links
# (EXTERNAL), and layers whose headers it uses without linking them.
function(dync_library name)
  cmake_parse_arguments(ARG "" "" "FOLDERS;SOURCES;DEPENDS;EXTERNAL;USES_HEADERS_OF" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  dync_target_defaults(${name})
  target_link_libraries(${name} PUBLIC ${ARG_DEPENDS} ${ARG_EXTERNAL})
  dync_declare_layer(${name} FOLDERS ${ARG_FOLDERS} DEPENDS ${ARG_DEPENDS}
                     USES_HEADERS_OF ${ARG_USES_HEADERS_OF} SOURCES ${ARG_SOURCES})
endfunction()

# Writes the declared layers to a file and adds the check every declared
# target depends on. Call once, after every folder was added.
function(dync_check_layering)
  get_property(layers GLOBAL PROPERTY DYNC_LAYERS)
  set(spec "")
  foreach(layer IN LISTS layers)
    get_property(folders GLOBAL PROPERTY DYNC_LAYER_${layer}_FOLDERS)
    get_property(depends GLOBAL PROPERTY DYNC_LAYER_${layer}_DEPENDS)
    get_property(sources GLOBAL PROPERTY DYNC_LAYER_${layer}_SOURCES)
    string(REPLACE ";" "," folders "${folders}")
    string(REPLACE ";" "," depends "${depends}")
    string(REPLACE ";" "," sources "${sources}")
    # An empty field is written as "-" so the fields keep their places.
    foreach(field folders depends sources)
      if("${${field}}" STREQUAL "")
        set(${field} "-")
      endif()
    endforeach()
    string(APPEND spec "${layer} ${folders} ${depends} ${sources}\n")
  endforeach()
  set(spec_file ${PROJECT_BINARY_DIR}/layers.txt)
  file(WRITE ${spec_file} "${spec}")
  add_custom_target(dync_layering ALL
    COMMAND "${Python3_EXECUTABLE}" ${PROJECT_SOURCE_DIR}/utils/check-layering.py
            --root ${PROJECT_SOURCE_DIR} --layers ${spec_file}
    COMMENT "Checking that every #include follows the declared layering"
    VERBATIM)
  foreach(layer IN LISTS layers)
    if(TARGET ${layer})
      add_dependencies(${layer} dync_layering)
    endif()
  endforeach()
endfunction()
