# Run at build time (the foldsweep_cli_docs target in CMakeLists.txt): the
# manual page and the shell completions, written by the built binary from
# its own command table (src/cli/cli.c and each command's options), so they
# always match the binary they are installed with. Set before this script:
# FS_BIN (the binary) and FS_OUT (the folder to write).
file(MAKE_DIRECTORY "${FS_OUT}")
foreach(job "help;--man;foldsweep.1" "completion;bash;foldsweep.bash" "completion;zsh;_foldsweep")
  list(GET job 0 fs_cmd)
  list(GET job 1 fs_arg)
  list(GET job 2 fs_file)
  execute_process(COMMAND "${FS_BIN}" ${fs_cmd} ${fs_arg} OUTPUT_FILE "${FS_OUT}/${fs_file}.tmp"
                  RESULT_VARIABLE fs_rc ERROR_VARIABLE fs_err)
  if(NOT fs_rc EQUAL 0)
    message(FATAL_ERROR "${FS_BIN} ${fs_cmd} ${fs_arg} failed (${fs_rc}): ${fs_err}")
  endif()
  file(RENAME "${FS_OUT}/${fs_file}.tmp" "${FS_OUT}/${fs_file}")
endforeach()
