# Runtime tests: root, real BPF, real workloads, checked against ground truth. Built only with
# DATACRUMBS_BPF=ON (they run the tools). Included by tests/CMakeLists.txt, whose directory paths
# here are relative to.
add_executable(io_workload runtime/io_workload.cpp)
target_link_libraries(io_workload PRIVATE Threads::Threads)

add_executable(tcp_pair runtime/tcp_pair.cpp)
add_executable(lingering_writer runtime/lingering_writer.cpp)
add_executable(mmap_reader runtime/mmap_reader.cpp)
target_link_libraries(mmap_reader PRIVATE Threads::Threads)
# Built without optimisation of its custom functions away, with its symbol table (the explorer reads it).
add_executable(stdio_app runtime/stdio_app.c)
# The same with libc linked in: its stdio functions are the program's own.
add_executable(stdio_app_static runtime/stdio_app.c)
target_link_options(stdio_app_static PRIVATE -static)
add_executable(usdt_app runtime/usdt_app.c)
add_library(dc_plugin SHARED runtime/plugin.c)
add_executable(plugin_app runtime/plugin_app.c)
# A statically linked program, which datacrumbs_track must refuse.
add_executable(static_app runtime/static_app.c)
target_link_options(static_app PRIVATE -static)
target_link_libraries(plugin_app PRIVATE ${CMAKE_DL_LIBS})
# Parallel HDF5 over Open MPI, linked to the shared libraries the HDF5 and MPI configs probe.
pkg_check_modules(HDF5_MPI REQUIRED IMPORTED_TARGET hdf5-openmpi)
add_executable(hdf5_mpi_app runtime/hdf5_mpi_app.c)
target_link_libraries(hdf5_mpi_app PRIVATE PkgConfig::HDF5_MPI)
# The same program as HDF5's compiler wrapper builds it, both ways: `h5pcc -shlib` links
# libhdf5_openmpi.so; Debian's plain `h5pcc` links libhdf5.a into the executable (H5Dwrite is
# the program's own function there), MPI staying shared.
find_program(H5PCC h5pcc REQUIRED)
# h5pcc compiles into hdf5_mpi_app.o in its working directory and removes it after linking: the
# two builds, run at once, each get a directory of their own (one removed the other's object).
foreach(linking shared static)
  set(app ${CMAKE_CURRENT_BINARY_DIR}/h5pcc_app_${linking})
  set(flag $<$<STREQUAL:${linking},shared>:-shlib>)
  set(work ${CMAKE_CURRENT_BINARY_DIR}/h5pcc_${linking})
  file(MAKE_DIRECTORY ${work})
  add_custom_command(OUTPUT ${app}
    COMMAND ${H5PCC} ${flag} -O2 -g -o ${app} ${CMAKE_CURRENT_SOURCE_DIR}/runtime/hdf5_mpi_app.c
    WORKING_DIRECTORY ${work}
    DEPENDS runtime/hdf5_mpi_app.c COMMENT "h5pcc ${linking}: h5pcc_app_${linking}" VERBATIM)
  add_custom_target(hdf5_mpi_app_${linking} DEPENDS ${app})
endforeach()

add_executable(runtime_tests
  runtime/pipeline_test.cpp runtime/workload_test.cpp runtime/trace_file_test.cpp runtime/cli_test.cpp
  runtime/block_test.cpp runtime/block_coverage.cpp runtime/block_end_test.cpp runtime/block_merge_test.cpp runtime/pagecache_test.cpp runtime/net_test.cpp runtime/fault_test.cpp runtime/fs_test.cpp runtime/uprobe_test.cpp runtime/hdf5_mpi_test.cpp runtime/mpi_launch_test.cpp runtime/deploy_test.cpp runtime/deploy_fixture.cpp runtime/deploy_modes_test.cpp runtime/postgres_test.cpp runtime/profile_test.cpp runtime/loop_fs.cpp runtime/runtime_helpers.cpp runtime/strace_counts.cpp unit/trace_reader.cpp
  runtime/analyze_csv_test.cpp runtime/bad_values_test.cpp runtime/live_view_test.cpp runtime/kept_object_test.cpp
  runtime/process_tree.cpp)
target_include_directories(runtime_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_definitions(runtime_tests PRIVATE
  DATACRUMBS_BIN="$<TARGET_FILE:datacrumbs>" IO_WORKLOAD_BIN="$<TARGET_FILE:io_workload>" TCP_PAIR_BIN="$<TARGET_FILE:tcp_pair>"
  LINGERING_WRITER_BIN="$<TARGET_FILE:lingering_writer>" MMAP_READER_BIN="$<TARGET_FILE:mmap_reader>"
  STDIO_APP_BIN="$<TARGET_FILE:stdio_app>" STDIO_STATIC_APP_BIN="$<TARGET_FILE:stdio_app_static>" USDT_APP_BIN="$<TARGET_FILE:usdt_app>" HDF5_MPI_APP_BIN="$<TARGET_FILE:hdf5_mpi_app>"
  H5PCC_SHARED_APP="${CMAKE_CURRENT_BINARY_DIR}/h5pcc_app_shared" H5PCC_STATIC_APP="${CMAKE_CURRENT_BINARY_DIR}/h5pcc_app_static"
  PLUGIN_APP_BIN="$<TARGET_FILE:plugin_app>" STATIC_APP_BIN="$<TARGET_FILE:static_app>"
  DATACRUMBS_BUILD_DIR="${CMAKE_BINARY_DIR}" PLUGIN_LIB="$<TARGET_FILE:dc_plugin>" DATACRUMBS_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
target_link_libraries(runtime_tests PRIVATE datacrumbs_core datacrumbs_deploy GTest::gtest_main PkgConfig::ZLIB nlohmann_json::nlohmann_json)
add_dependencies(runtime_tests datacrumbs usdt_app io_workload tcp_pair lingering_writer mmap_reader stdio_app stdio_app_static hdf5_mpi_app hdf5_mpi_app_shared hdf5_mpi_app_static plugin_app dc_plugin datacrumbs_probe_configurator datacrumbs_client datacrumbs_track static_app datacrumbs_sign_probes)
gtest_discover_tests(runtime_tests PROPERTIES LABELS runtime RUN_SERIAL TRUE DISCOVERY_TIMEOUT 30)

# Calls that move data between two files, against the sizes they moved and /proc/PID/io.
add_executable(two_file_calls runtime/two_file_calls.c)
target_link_libraries(two_file_calls PRIVATE Threads::Threads)
add_executable(two_file_runtime_tests runtime/two_file_test.cpp runtime/loop_fs.cpp runtime/runtime_helpers.cpp unit/trace_reader.cpp)
target_include_directories(two_file_runtime_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_definitions(two_file_runtime_tests PRIVATE
  DATACRUMBS_BIN="$<TARGET_FILE:datacrumbs>" TWO_FILE_CALLS_BIN="$<TARGET_FILE:two_file_calls>")
target_link_libraries(two_file_runtime_tests PRIVATE GTest::gtest_main PkgConfig::ZLIB nlohmann_json::nlohmann_json)
add_dependencies(two_file_runtime_tests datacrumbs two_file_calls)
gtest_discover_tests(two_file_runtime_tests PROPERTIES LABELS runtime RUN_SERIAL TRUE DISCOVERY_TIMEOUT 30)

# The analyze counters against a controlled workload traced by the real tool.
add_executable(darshan_workload runtime/darshan_workload.c)
add_executable(stdio_workload runtime/stdio_workload.c)
add_executable(analyze_counters_runtime_tests runtime/analyze_counters_test.cpp runtime/analyze_modules_test.cpp
  runtime/runtime_helpers.cpp unit/trace_reader.cpp unit/analyze_lines.cpp)
target_include_directories(analyze_counters_runtime_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_definitions(analyze_counters_runtime_tests PRIVATE
  DATACRUMBS_BIN="$<TARGET_FILE:datacrumbs>" DARSHAN_WORKLOAD_BIN="$<TARGET_FILE:darshan_workload>"
  STDIO_WORKLOAD_BIN="$<TARGET_FILE:stdio_workload>" HDF5_MPI_APP_BIN="$<TARGET_FILE:hdf5_mpi_app>"
  DATACRUMBS_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
target_link_libraries(analyze_counters_runtime_tests PRIVATE datacrumbs_analyze GTest::gtest_main PkgConfig::ZLIB)
add_dependencies(analyze_counters_runtime_tests datacrumbs darshan_workload stdio_workload hdf5_mpi_app)
gtest_discover_tests(analyze_counters_runtime_tests PROPERTIES LABELS runtime RUN_SERIAL TRUE DISCOVERY_TIMEOUT 30)

# `analyze --html` on the trace of a real run (root: it traces).
add_executable(html_report_runtime_tests runtime/analyze_html_test.cpp runtime/runtime_helpers.cpp unit/trace_reader.cpp
  unit/headless_chromium.cpp)
target_include_directories(html_report_runtime_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_definitions(html_report_runtime_tests PRIVATE DATACRUMBS_BIN="$<TARGET_FILE:datacrumbs>")
target_link_libraries(html_report_runtime_tests PRIVATE GTest::gtest_main PkgConfig::ZLIB nlohmann_json::nlohmann_json)
add_dependencies(html_report_runtime_tests datacrumbs)
gtest_discover_tests(html_report_runtime_tests PROPERTIES LABELS runtime RUN_SERIAL TRUE)

# datacrumbs analyze against real runs (root).
add_executable(analyze_runtime_tests runtime/analyze_runtime_test.cpp runtime/analyze_hosts_test.cpp
  runtime/runtime_helpers.cpp unit/trace_reader.cpp)
target_include_directories(analyze_runtime_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_definitions(analyze_runtime_tests PRIVATE DATACRUMBS_BIN="$<TARGET_FILE:datacrumbs>")
target_link_libraries(analyze_runtime_tests PRIVATE datacrumbs_analyze GTest::gtest_main PkgConfig::ZLIB)
add_dependencies(analyze_runtime_tests datacrumbs)
gtest_discover_tests(analyze_runtime_tests PROPERTIES LABELS runtime RUN_SERIAL TRUE DISCOVERY_TIMEOUT 30)

# The analyze command on bad input (messages, exit status) and its progress bar on a terminal
# (script(1)); no root needed, but it runs the real binary.
add_executable(analyze_cli_tests runtime/analyze_cli_test.cpp unit/analyze_test_util.cpp unit/trace_reader.cpp)
target_include_directories(analyze_cli_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_definitions(analyze_cli_tests PRIVATE DATACRUMBS_BIN="$<TARGET_FILE:datacrumbs>")
target_link_libraries(analyze_cli_tests PRIVATE datacrumbs_analyze datacrumbs_sink GTest::gtest_main PkgConfig::ZLIB
  PkgConfig::LIBDEFLATE)
add_dependencies(analyze_cli_tests datacrumbs)
gtest_discover_tests(analyze_cli_tests PROPERTIES LABELS runtime)

# The Dask driver against single-process analyze, over traces of real runs (root: it traces them).
add_test(NAME dask_equals_analyze
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/runtime/dask_test.py $<TARGET_FILE:datacrumbs>
    ${CMAKE_BINARY_DIR}/bin/datacrumbs-dask)
set_tests_properties(dask_equals_analyze PROPERTIES LABELS runtime RUN_SERIAL TRUE TIMEOUT 300)

# The snapshots in a real trace against nproc, uname, lsblk, findmnt and stat.
add_executable(snapshot_runtime_tests runtime/snapshot_test.cpp runtime/deploy_fixture.cpp runtime/runtime_helpers.cpp
  unit/trace_reader.cpp)
target_include_directories(snapshot_runtime_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_definitions(snapshot_runtime_tests PRIVATE DATACRUMBS_BIN="$<TARGET_FILE:datacrumbs>")
target_link_libraries(snapshot_runtime_tests PRIVATE datacrumbs_deploy GTest::gtest_main PkgConfig::ZLIB nlohmann_json::nlohmann_json)
add_dependencies(snapshot_runtime_tests datacrumbs datacrumbs_probe_configurator datacrumbs_client)
gtest_discover_tests(snapshot_runtime_tests PROPERTIES LABELS runtime RUN_SERIAL TRUE DISCOVERY_TIMEOUT 30)

# SLURM end to end on a real one-node cluster (needs slurmctld, slurmd, munged; root).
if(TARGET datacrumbs_spank)
  add_executable(slurm_tests runtime/slurm_test.cpp runtime/slurm_prolog_test.cpp runtime/runtime_helpers.cpp runtime/process_tree.cpp
    unit/trace_reader.cpp)
  target_include_directories(slurm_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_compile_definitions(slurm_tests PRIVATE DATACRUMBS_BIN="$<TARGET_FILE:datacrumbs>" DATACRUMBS_BUILD_DIR="${CMAKE_BINARY_DIR}"
    DATACRUMBS_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  target_link_libraries(slurm_tests PRIVATE datacrumbs_core datacrumbs_deploy GTest::gtest_main PkgConfig::ZLIB nlohmann_json::nlohmann_json)
  add_dependencies(slurm_tests datacrumbs datacrumbs_probe_configurator datacrumbs_client datacrumbs_job_metadata
    datacrumbs_spank datacrumbs_track datacrumbs_sign_probes)
  gtest_discover_tests(slurm_tests PROPERTIES LABELS runtime RUN_SERIAL TRUE TIMEOUT 600 DISCOVERY_TIMEOUT 30)
endif()

# Flux end to end on a real `flux start` instance (flux-core built once per machine by
# scripts/build-flux.sh on its first run, minutes; root). -DDATACRUMBS_FLUX_TESTS=OFF skips it.
option(DATACRUMBS_FLUX_TESTS "register the Flux runtime test (builds flux-core on first run)" ON)
add_executable(flux_tests runtime/flux_test.cpp runtime/runtime_helpers.cpp unit/trace_reader.cpp)
target_include_directories(flux_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_definitions(flux_tests PRIVATE DATACRUMBS_BIN="$<TARGET_FILE:datacrumbs>" DATACRUMBS_BUILD_DIR="${CMAKE_BINARY_DIR}"
  DATACRUMBS_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
target_link_libraries(flux_tests PRIVATE datacrumbs_core datacrumbs_deploy GTest::gtest_main PkgConfig::ZLIB nlohmann_json::nlohmann_json)
add_dependencies(flux_tests datacrumbs datacrumbs_probe_configurator datacrumbs_client datacrumbs_job_metadata
  datacrumbs_track datacrumbs_sign_probes)
if(TARGET datacrumbs_spank)
  add_dependencies(flux_tests datacrumbs_spank)  # cmake --install installs it too
endif()
if(DATACRUMBS_FLUX_TESTS)
  # TIMEOUT before DISCOVERY_TIMEOUT: after it, gtest_discover_tests takes it for none of its
  # PROPERTIES and drops it (ctest's default of 600 s applied, and a first flux-core build beside
  # other work took longer).
  gtest_discover_tests(flux_tests PROPERTIES LABELS runtime RUN_SERIAL TRUE TIMEOUT 900 DISCOVERY_TIMEOUT 30)
endif()

# The BPF object loaded (never attached) as for larger machines: the verifier's work must not grow
# with the possible CPUs. With them, the uprobe warm-up (do-nothing uprobes on the test itself).
# And profile mode's counter map read both ways (runtime/profile_reader_test.cpp).
add_executable(kernel_object_tests runtime/kernel_object_test.cpp runtime/core_btf_test.cpp runtime/object_reset_test.cpp
  runtime/refusal_memory_test.cpp runtime/uprobe_warmup_test.cpp runtime/profile_reader_test.cpp)
target_include_directories(kernel_object_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(kernel_object_tests PRIVATE datacrumbs_probe datacrumbs_collect datacrumbs_skeletons GTest::gtest_main)
gtest_discover_tests(kernel_object_tests PROPERTIES LABELS runtime RUN_SERIAL TRUE DISCOVERY_TIMEOUT 30)

# Reliability under faults and attack (docs/reliability.md): the tools killed while they hold
# processes, full and vanishing disks, storms, ring overflow, pid reuse, hostile paths and
# clients. Each test prints its figure ("figure: ...") for the document to be checked against.
add_executable(ring_flood runtime/ring_flood.c)
target_link_libraries(ring_flood PRIVATE Threads::Threads)
add_executable(reliability_tests runtime/hold_kill_test.cpp runtime/fuse_trace_test.cpp runtime/disk_full_test.cpp runtime/ring_overflow_test.cpp runtime/planted_links_test.cpp runtime/read_only_test.cpp runtime/trace_fault.cpp runtime/loop_fs.cpp runtime/process_tree.cpp runtime/deploy_fixture.cpp
  runtime/sign_service_test.cpp runtime/sign_fair_test.cpp runtime/secrets_test.cpp runtime/daemon_uid_test.cpp runtime/sign_hang_test.cpp runtime/sign_service_fixture.cpp
  runtime/runtime_helpers.cpp unit/trace_reader.cpp)
target_include_directories(reliability_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_definitions(reliability_tests PRIVATE DATACRUMBS_BIN="$<TARGET_FILE:datacrumbs>"
  DATACRUMBS_BUILD_DIR="${CMAKE_BINARY_DIR}" STATIC_APP_BIN="$<TARGET_FILE:static_app>"
  RING_FLOOD_BIN="$<TARGET_FILE:ring_flood>")
target_link_libraries(reliability_tests PRIVATE datacrumbs_deploy GTest::gtest_main PkgConfig::ZLIB
  nlohmann_json::nlohmann_json)
add_dependencies(reliability_tests datacrumbs datacrumbs_probe_configurator datacrumbs_client datacrumbs_sign_probes static_app ring_flood)
gtest_discover_tests(reliability_tests PROPERTIES LABELS runtime RUN_SERIAL TRUE TIMEOUT 600 DISCOVERY_TIMEOUT 30)

# Storms (docs/reliability.md, Faults): a segfault, exit from many threads, an exec loop, a
# fork/exec storm (DC_STORM_CHILDREN, default 10,000), pid reuse; strace as ground truth. The hold
# ring overflowed by a fork storm under user-space probes (DC_HOLD_FLOOD_CHILDREN, default 4,000).
add_executable(storm_workload runtime/storm_workload.c)
target_link_libraries(storm_workload PRIVATE Threads::Threads)
add_executable(storm_tests runtime/storm_test.cpp runtime/hold_ring_test.cpp runtime/strace_counts.cpp runtime/runtime_helpers.cpp runtime/process_tree.cpp
  unit/trace_reader.cpp)
target_include_directories(storm_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_definitions(storm_tests PRIVATE DATACRUMBS_BIN="$<TARGET_FILE:datacrumbs>"
  STORM_WORKLOAD_BIN="$<TARGET_FILE:storm_workload>")
target_link_libraries(storm_tests PRIVATE datacrumbs_sink datacrumbs_core GTest::gtest_main PkgConfig::ZLIB nlohmann_json::nlohmann_json)
add_dependencies(storm_tests datacrumbs storm_workload)
gtest_discover_tests(storm_tests PROPERTIES LABELS runtime RUN_SERIAL TRUE TIMEOUT 600 DISCOVERY_TIMEOUT 30)

# Real viewers read traces of a real mixed run (trace and profile mode): Chrome's trace model
# (Node, @tracerbench/trace-model pinned in viewers/package-lock.json) with Perfetto's JSON
# importer rules, and LLNL's dfanalyzer (vendored beside the repository, patched at test time;
# skipped only when its tarball is absent).
foreach(viewer trace_model dfanalyzer)
  add_test(NAME viewers_${viewer}
    COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/viewers/${viewer}_runtime_test.py $<TARGET_FILE:datacrumbs>
      $<TARGET_FILE:tcp_pair> $<TARGET_FILE:stdio_app>)
  set_tests_properties(viewers_${viewer} PROPERTIES LABELS runtime RUN_SERIAL TRUE TIMEOUT 600 SKIP_RETURN_CODE 77)
endforeach()
