# The project's BPF programs (src/perf/bpf/*.bpf.c), compiled at build time
# with clang's BPF target against a vmlinux.h that bpftool writes from the
# running kernel's BTF (CO-RE: libbpf relocates field offsets at load), and
# embedded in librtdiag as byte arrays (bpf/NAME.bpf.inc). libbpf itself is
# opened at run time (dlopen), only by the commands that load a program.
# -DRTD_BPF=OFF builds without them: the perf paths then say why.
option(RTD_BPF "Build the BPF programs (off-CPU in the kernel, syscall strings)" ON)
if(RTD_BPF)
  find_program(RTD_BPFTOOL bpftool PATHS /usr/sbin /sbin)
  find_program(RTD_BPF_CLANG clang)
  find_program(RTD_LLVM_STRIP NAMES llvm-strip llvm-strip-14)
  find_path(RTD_LIBBPF_INCLUDE bpf/libbpf.h)
  set(RTD_VMLINUX_BTF /sys/kernel/btf/vmlinux CACHE FILEPATH
    "kernel BTF that vmlinux.h is generated from")
  set(_missing "")
  foreach(v RTD_BPFTOOL RTD_BPF_CLANG RTD_LLVM_STRIP RTD_LIBBPF_INCLUDE)
    if(NOT ${v})
      list(APPEND _missing ${v})
    endif()
  endforeach()
  if(NOT EXISTS ${RTD_VMLINUX_BTF})
    list(APPEND _missing ${RTD_VMLINUX_BTF})
  endif()
  if(_missing)
    message(WARNING "RTD_BPF: ${_missing} not found (scripts/install-deps.sh "
      "installs bpftool, clang and libbpf-dev); building without BPF")
    set(RTD_BPF OFF CACHE BOOL "" FORCE)
  endif()
endif()

set(RTD_BPF_INCS "")
if(RTD_BPF)
  set(_out ${PROJECT_BINARY_DIR}/bpf)
  file(MAKE_DIRECTORY ${_out})
  add_custom_command(OUTPUT ${_out}/vmlinux.h
    COMMAND ${RTD_BPFTOOL} btf dump file ${RTD_VMLINUX_BTF} format c > ${_out}/vmlinux.h.tmp
    COMMAND ${CMAKE_COMMAND} -E rename ${_out}/vmlinux.h.tmp ${_out}/vmlinux.h
    COMMENT "bpftool: vmlinux.h from ${RTD_VMLINUX_BTF}" VERBATIM)
  file(GLOB _progs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/perf/bpf/*.bpf.c)
  file(GLOB _hdrs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/perf/bpf/*.h)
  foreach(src ${_progs})
    get_filename_component(name ${src} NAME_WE)
    add_custom_command(OUTPUT ${_out}/${name}.bpf.inc
      COMMAND ${RTD_BPF_CLANG} -target bpf -D__TARGET_ARCH_x86 -O2 -g
        -Wall -Werror -I${_out} -I${PROJECT_SOURCE_DIR}/src/perf/bpf
        -I${RTD_LIBBPF_INCLUDE} -c ${src} -o ${_out}/${name}.bpf.o
      # the BTF stays (CO-RE needs it), the DWARF goes
      COMMAND ${RTD_LLVM_STRIP} -g ${_out}/${name}.bpf.o
      COMMAND ${CMAKE_COMMAND} -DIN=${_out}/${name}.bpf.o
        -DOUT=${_out}/${name}.bpf.inc -DNAME=${name}_bpf_obj
        -P ${PROJECT_SOURCE_DIR}/cmake/embed.cmake
      DEPENDS ${src} ${_hdrs} ${_out}/vmlinux.h ${PROJECT_SOURCE_DIR}/cmake/embed.cmake
      COMMENT "clang -target bpf: ${name}.bpf.c" VERBATIM)
    list(APPEND RTD_BPF_INCS ${_out}/${name}.bpf.inc)
  endforeach()
endif()
