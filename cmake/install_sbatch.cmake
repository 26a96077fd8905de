# Run by `cmake --install` (install(SCRIPT) in CMakeLists.txt): installs
# slurm/foldsweep.sbatch with the installed binary's path written into it.
# sbatch runs a copy of the script from Slurm's spool folder, so the script
# cannot find the binary relative to itself; this way the installed script
# works from any folder without FOLDSWEEP_BIN. The path is the one chosen at
# install time (--prefix), not at configure time. Set before this script:
# FS_SBATCH_SRC (the script), FS_SBATCH_TMP (a scratch file), FS_BINDIR and
# FS_DATADIR (GNUInstallDirs' relative or absolute folders).
if(IS_ABSOLUTE "${FS_BINDIR}")
  set(fs_bin "${FS_BINDIR}/foldsweep")
else()
  set(fs_bin "${CMAKE_INSTALL_PREFIX}/${FS_BINDIR}/foldsweep")
endif()
if(IS_ABSOLUTE "${FS_DATADIR}")
  set(fs_dest "${FS_DATADIR}/foldsweep/slurm")
else()
  set(fs_dest "${CMAKE_INSTALL_PREFIX}/${FS_DATADIR}/foldsweep/slurm")
endif()
file(READ "${FS_SBATCH_SRC}" fs_text)
set(fs_marker "installed_bin=\"\"")
string(FIND "${fs_text}" "${fs_marker}" fs_at)
if(fs_at LESS 0)
  message(FATAL_ERROR "${FS_SBATCH_SRC}: no line ${fs_marker} to write the binary's path into")
endif()
string(REPLACE "${fs_marker}" "installed_bin=\"${fs_bin}\"" fs_text "${fs_text}")
get_filename_component(fs_tmp_dir "${FS_SBATCH_TMP}" DIRECTORY)
file(MAKE_DIRECTORY "${fs_tmp_dir}")
file(WRITE "${FS_SBATCH_TMP}" "${fs_text}")
# file(INSTALL) adds DESTDIR and prints "Installing: ..." like install() does.
file(INSTALL "${FS_SBATCH_TMP}" DESTINATION "${fs_dest}" TYPE PROGRAM)
