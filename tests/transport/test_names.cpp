#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ferry/transport/names.hpp"
#include "test_domain.hpp"

using namespace ferry::transport;

TEST_CASE("domain names are letters, digits, dash and underscore, 1 to 32 long") {
  CHECK(is_valid_domain("default"));
  CHECK(is_valid_domain("robot_2-a"));
  CHECK(is_valid_domain(std::string(32, 'a')));
  CHECK_FALSE(is_valid_domain(""));
  CHECK_FALSE(is_valid_domain(std::string(33, 'a')));
  CHECK_FALSE(is_valid_domain("a.b"));
  CHECK_FALSE(is_valid_domain("a/b"));
  CHECK_FALSE(is_valid_domain("a b"));
}

TEST_CASE("every object of a domain shares the ferry.<domain>. prefix") {
  CHECK(shm_name("demo", "ring.3") == "ferry.demo.ring.3");
  CHECK(shm_prefix("demo") == "ferry.demo.");
}

TEST_CASE("removing a domain's objects removes only that domain's") {
  ferry::test::TestDomain a;
  ferry::test::TestDomain b;
  for (const auto* d : {&a, &b}) {
    const std::string path = "/" + shm_name(d->name(), "x");
    const int fd = ::shm_open(path.c_str(), O_CREAT | O_RDWR, 0600);
    REQUIRE(fd >= 0);
    ::close(fd);
  }
  CHECK(list_domain_objects(a.name()).size() == 1);
  CHECK(remove_domain_objects(a.name()) == 1);
  CHECK(list_domain_objects(a.name()).empty());
  CHECK(list_domain_objects(b.name()).size() == 1);
}
