# schedlab front door. `make run` and `make test` set up everything on a
# fresh Debian machine (as root): missing packages are installed with apt-get.

DEB_PACKAGES := cmake ninja-build g++ make libgtest-dev libgmock-dev libbenchmark-dev \
                libcli11-dev nlohmann-json3-dev libtomlplusplus-dev
EXPERIMENT ?= experiments/linux24-vs-cfs-messaging.toml
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all deps build build-debug run test bench format clean

all: build

deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

build: deps
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS)

build-debug: deps
	cmake --preset debug >/dev/null
	cmake --build --preset debug -j $(JOBS)

run: build
	./build/release/schedlab run $(EXPERIMENT)

# Debug build under ASan+UBSan runs every test; the Release binary is built
# too so that Debug and Release outputs can be compared byte for byte.
test: build build-debug
	ctest --preset debug -j $(JOBS)

bench: build
	./build/release/bench/schedlab_bench

format:
	clang-format -i $$(git ls-files '*.cpp' '*.hpp')

clean:
	rm -rf build
