# Links with lld when the compiler can use it (Debian's lld package): a test
# program links in about a third of the CPU time of GNU ld (0.3 s instead of
# 0.7 s under ASan, 0.06 s instead of 0.3 s in the normal build), and a
# full build links some 180 programs. Without lld the default linker is used.
option(FERRY_USE_LLD "Link with lld when it is installed" ON)
if(FERRY_USE_LLD)
  include(CheckLinkerFlag)
  check_linker_flag(CXX -fuse-ld=lld FERRY_HAVE_LLD)
  if(FERRY_HAVE_LLD)
    add_link_options(-fuse-ld=lld)
  endif()
endif()
