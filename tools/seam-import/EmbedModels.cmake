# Writes OUTPUT: one `{"name", R"seamjson(<json>)seamjson"},` initialiser per
# MODELS_DIR/*.json, so seam-import carries its bundled configs.
file(GLOB configs "${MODELS_DIR}/*.json")
list(SORT configs)
set(text "// Generated from models/*.json by EmbedModels.cmake: do not edit.\n")
foreach(config ${configs})
  get_filename_component(name "${config}" NAME_WE)
  file(READ "${config}" json)
  string(APPEND text "{\"${name}\", R\"seamjson(${json})seamjson\"},\n")
endforeach()
file(WRITE "${OUTPUT}.tmp" "${text}")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different
                "${OUTPUT}.tmp" "${OUTPUT}")
