#!/usr/bin/env python3
"""Replays warpsim launches on a real GPU, from the directories `warpsim export` writes.

    warpsim export programs/cuda/transposeSmemF.toml /tmp/transposeSmemF
    python3 programs/timing/hardware/launch.py /tmp/transposeSmemF --dump /tmp/hw

For each export directory, in order: the driver loads `module.ptx` (its JIT
compiles the PTX for the GPU at hand), allocates each buffer and copies its
initial image in (a module `.global` variable is found by name in the module
instead of allocated), writes the buffers' device addresses into the
parameter buffer where `launch.json`'s `pointers` say, launches the kernel
with the parameter buffer (`CU_LAUNCH_PARAM_BUFFER_POINTER`), synchronises,
and checks every call. With `--dump DIR` it writes each buffer's final
contents to DIR/EXPORT/FILE, EXPORT the export directory's name and FILE
the buffer's image's name in it, raw bytes like `warpsim run --dump`.

Only Python's standard library and the CUDA driver (libcuda.so, through
ctypes) are used, so it runs wherever a driver is installed, and under
Nsight Compute, which profiles each launch:

    ncu --csv --metrics gpc__cycles_elapsed.max python3 launch.py DIR1 DIR2 ...

Several directories in one process keep the driver's start-up out of all but
the first; `--repeat N` launches each kernel N times in a row, each time from
its initial buffers, so that a profiler sees N identical launches. `--summary
FILE` writes, per launch, what the JIT made of the kernel (registers, shared
and local memory, its log) and the wall time between events around each
launch (meaningless under a profiler, which replays the kernel). The exit status is 0 when every launch succeeded, 1
when one failed (the others still run), and 2 for bad input.
"""

import argparse
import ctypes
import json
import os
import struct
import sys

# The format of launch.json this script reads (crates/driver/src/export.rs).
FORMAT = "warpsim-export-1"

# Values from cuda.h.
CU_LAUNCH_PARAM_END = 0x00
CU_LAUNCH_PARAM_BUFFER_POINTER = 0x01
CU_LAUNCH_PARAM_BUFFER_SIZE = 0x02
CU_JIT_INFO_LOG_BUFFER = 3
CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4
CU_JIT_ERROR_LOG_BUFFER = 5
CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6
CU_JIT_LOG_VERBOSE = 12
CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1
CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3
CU_FUNC_ATTRIBUTE_NUM_REGS = 4
CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76

# How large the JIT's logs may grow.
LOG_BYTES = 1 << 16


class CudaError(Exception):
    """A driver call that did not return CUDA_SUCCESS."""


class KernelFault(CudaError):
    """A kernel that failed while it ran, which leaves the context unusable."""


class BadExport(Exception):
    """An export directory that cannot be replayed as it is."""


class Driver:
    """The few CUDA driver calls a replay needs, each checked."""

    def __init__(self):
        try:
            self.lib = ctypes.CDLL("libcuda.so.1")
        except OSError:
            self.lib = ctypes.CDLL("libcuda.so")
        self.lib.cuGetErrorName.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
        self.lib.cuGetErrorString.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
        self.lib.cuModuleLoadDataEx.argtypes = [
            ctypes.POINTER(ctypes.c_void_p),
            ctypes.c_char_p,
            ctypes.c_uint,
            ctypes.POINTER(ctypes.c_int),
            ctypes.POINTER(ctypes.c_void_p),
        ]
        self.lib.cuModuleGetFunction.argtypes = [
            ctypes.POINTER(ctypes.c_void_p),
            ctypes.c_void_p,
            ctypes.c_char_p,
        ]
        self.lib.cuModuleGetGlobal_v2.argtypes = [
            ctypes.POINTER(ctypes.c_uint64),
            ctypes.POINTER(ctypes.c_size_t),
            ctypes.c_void_p,
            ctypes.c_char_p,
        ]
        self.lib.cuMemAlloc_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
        self.lib.cuMemFree_v2.argtypes = [ctypes.c_uint64]
        self.lib.cuMemcpyHtoD_v2.argtypes = [ctypes.c_uint64, ctypes.c_void_p, ctypes.c_size_t]
        self.lib.cuMemcpyDtoH_v2.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t]
        self.lib.cuModuleUnload.argtypes = [ctypes.c_void_p]
        self.lib.cuFuncGetAttribute.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_int, ctypes.c_void_p]
        self.lib.cuFuncSetAttribute.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
        self.lib.cuLaunchKernel.argtypes = [
            ctypes.c_void_p,
            ctypes.c_uint, ctypes.c_uint, ctypes.c_uint,
            ctypes.c_uint, ctypes.c_uint, ctypes.c_uint,
            ctypes.c_uint,
            ctypes.c_void_p,
            ctypes.POINTER(ctypes.c_void_p),
            ctypes.POINTER(ctypes.c_void_p),
        ]
        self.lib.cuEventCreate.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint]
        self.lib.cuEventRecord.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        self.lib.cuEventElapsedTime.argtypes = [ctypes.POINTER(ctypes.c_float), ctypes.c_void_p, ctypes.c_void_p]
        self.lib.cuEventDestroy_v2.argtypes = [ctypes.c_void_p]
        self.check(self.lib.cuInit(0), "cuInit")
        self.device = ctypes.c_int()
        self.check(self.lib.cuDeviceGet(ctypes.byref(self.device), 0), "cuDeviceGet")
        self.context = ctypes.c_void_p()
        self.check(
            self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(self.context), self.device),
            "cuDevicePrimaryCtxRetain",
        )
        self.check(self.lib.cuCtxSetCurrent(self.context), "cuCtxSetCurrent")

    def check(self, status, call, error=CudaError):
        """Raises `error` naming `call` unless `status` is CUDA_SUCCESS."""
        if status == 0:
            return
        name = ctypes.c_char_p()
        text = ctypes.c_char_p()
        self.lib.cuGetErrorName(status, ctypes.byref(name))
        self.lib.cuGetErrorString(status, ctypes.byref(text))
        name = name.value.decode() if name.value else f"error {status}"
        text = text.value.decode() if text.value else "unknown error"
        raise error(f"{call}: {name} ({text})")

    def device_description(self):
        """The GPU's name, compute capability, SM count and the driver's version."""
        name = ctypes.create_string_buffer(256)
        self.check(self.lib.cuDeviceGetName(name, len(name), self.device), "cuDeviceGetName")
        values = {}
        for key, attribute in (
            ("sms", CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
            ("major", CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
            ("minor", CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR),
        ):
            value = ctypes.c_int()
            self.check(
                self.lib.cuDeviceGetAttribute(ctypes.byref(value), attribute, self.device),
                "cuDeviceGetAttribute",
            )
            values[key] = value.value
        version = ctypes.c_int()
        self.check(self.lib.cuDriverGetVersion(ctypes.byref(version)), "cuDriverGetVersion")
        return {
            "name": name.value.decode(),
            "compute_capability": f"{values['major']}.{values['minor']}",
            "sms": values["sms"],
            "cuda_driver_version": f"{version.value // 1000}.{version.value % 1000 // 10}",
        }

    def load_module(self, ptx):
        """Loads PTX text (bytes); returns the module and the JIT's info log."""
        info = ctypes.create_string_buffer(LOG_BYTES)
        error = ctypes.create_string_buffer(LOG_BYTES)
        keys = [
            CU_JIT_INFO_LOG_BUFFER,
            CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
            CU_JIT_ERROR_LOG_BUFFER,
            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
            CU_JIT_LOG_VERBOSE,
        ]
        values = [
            ctypes.cast(info, ctypes.c_void_p),
            ctypes.c_void_p(LOG_BYTES),
            ctypes.cast(error, ctypes.c_void_p),
            ctypes.c_void_p(LOG_BYTES),
            ctypes.c_void_p(1),
        ]
        module = ctypes.c_void_p()
        status = self.lib.cuModuleLoadDataEx(
            ctypes.byref(module),
            ptx + b"\0",
            len(keys),
            (ctypes.c_int * len(keys))(*keys),
            (ctypes.c_void_p * len(values))(*values),
        )
        if status != 0:
            log = error.value.decode(errors="replace").strip()
            try:
                self.check(status, "cuModuleLoadDataEx")
            except CudaError as failure:
                raise CudaError(f"{failure}\n{log}") from None
        return module, info.value.decode(errors="replace").strip()


def read_export(directory):
    """launch.json of an export directory, checked for what the replay needs."""
    path = os.path.join(directory, "launch.json")
    try:
        with open(path) as file:
            launch = json.load(file)
    except (OSError, ValueError) as error:
        raise BadExport(f"{path}: {error}") from None
    if launch.get("format") != FORMAT:
        raise BadExport(f"{path}: format {launch.get('format')!r}, but this script reads {FORMAT!r}")
    for key in ("kernel", "ptx", "grid", "block", "dynamic_shared_bytes", "parameters", "pointers", "buffers"):
        if key not in launch:
            raise BadExport(f"{path}: no `{key}`")
    names = {buffer["name"] for buffer in launch["buffers"]}
    for pointer in launch["pointers"]:
        if pointer["buffer"] not in names:
            raise BadExport(f"{path}: a pointer names buffer `{pointer['buffer']}`, which is not among the buffers")
        if pointer["offset"] + 8 > len(launch["parameters"]) // 2:
            raise BadExport(f"{path}: a pointer at byte {pointer['offset']} is past the parameter buffer")
    return launch


def replay(driver, directory, dump_dir, repeat):
    """Runs one export on the GPU `repeat` times; returns what the summary records of it."""
    launch = read_export(directory)
    with open(os.path.join(directory, launch["ptx"]), "rb") as file:
        ptx = file.read()
    module, jit_log = driver.load_module(ptx)
    allocated = []
    try:
        function = ctypes.c_void_p()
        driver.check(
            driver.lib.cuModuleGetFunction(ctypes.byref(function), module, launch["kernel"].encode()),
            f"cuModuleGetFunction({launch['kernel']})",
        )
        attributes = {}
        for key, attribute in (
            ("registers", CU_FUNC_ATTRIBUTE_NUM_REGS),
            ("static_shared_bytes", CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES),
            ("local_bytes", CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES),
        ):
            value = ctypes.c_int()
            driver.check(driver.lib.cuFuncGetAttribute(ctypes.byref(value), attribute, function), "cuFuncGetAttribute")
            attributes[key] = value.value
        dynamic_shared = launch["dynamic_shared_bytes"]
        if dynamic_shared > 48 * 1024:
            # Above 48 KiB a kernel must ask for its dynamic shared memory.
            driver.check(
                driver.lib.cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, dynamic_shared),
                "cuFuncSetAttribute",
            )

        # Each buffer's device memory, and its initial image.
        addresses, images = {}, {}
        for buffer in launch["buffers"]:
            size = buffer["bytes"]
            with open(os.path.join(directory, buffer["file"]), "rb") as file:
                image = file.read()
            if len(image) != size:
                raise BadExport(f"{directory}: {buffer['file']} has {len(image)} bytes, not {size}")
            address = ctypes.c_uint64()
            if buffer["global"]:
                found = ctypes.c_size_t()
                driver.check(
                    driver.lib.cuModuleGetGlobal_v2(
                        ctypes.byref(address), ctypes.byref(found), module, buffer["name"].encode()
                    ),
                    f"cuModuleGetGlobal({buffer['name']})",
                )
                if found.value != size:
                    raise BadExport(
                        f"{directory}: the module's `{buffer['name']}` has {found.value} bytes, the export {size}"
                    )
            else:
                # cuMemAlloc refuses 0 bytes; an empty buffer still needs an address.
                driver.check(driver.lib.cuMemAlloc_v2(ctypes.byref(address), max(size, 1)), "cuMemAlloc")
                allocated.append(address.value)
            addresses[buffer["name"]] = address.value
            images[buffer["name"]] = image

        # The parameter buffer, with this GPU's addresses of the buffers.
        parameters = bytearray.fromhex(launch["parameters"])
        for pointer in launch["pointers"]:
            struct.pack_into("<Q", parameters, pointer["offset"], addresses[pointer["buffer"]] + pointer["buffer_offset"])
        parameter_bytes = (ctypes.c_char * max(len(parameters), 1)).from_buffer_copy(bytes(parameters) or b"\0")
        parameter_size = ctypes.c_size_t(len(parameters))
        extra = (ctypes.c_void_p * 5)(
            ctypes.c_void_p(CU_LAUNCH_PARAM_BUFFER_POINTER),
            ctypes.cast(parameter_bytes, ctypes.c_void_p),
            ctypes.c_void_p(CU_LAUNCH_PARAM_BUFFER_SIZE),
            ctypes.cast(ctypes.pointer(parameter_size), ctypes.c_void_p),
            ctypes.c_void_p(CU_LAUNCH_PARAM_END),
        )
        start, end = ctypes.c_void_p(), ctypes.c_void_p()
        driver.check(driver.lib.cuEventCreate(ctypes.byref(start), 0), "cuEventCreate")
        driver.check(driver.lib.cuEventCreate(ctypes.byref(end), 0), "cuEventCreate")
        grid, block = launch["grid"], launch["block"]
        elapsed_ms = []
        # Every launch starts from the initial images, so that repeats run
        # the same kernel on the same data.
        for _ in range(repeat):
            for name, image in images.items():
                if image:
                    driver.check(driver.lib.cuMemcpyHtoD_v2(addresses[name], image, len(image)), "cuMemcpyHtoD")
            driver.check(driver.lib.cuEventRecord(start, None), "cuEventRecord")
            driver.check(
                driver.lib.cuLaunchKernel(
                    function, grid[0], grid[1], grid[2], block[0], block[1], block[2], dynamic_shared, None, None, extra
                ),
                "cuLaunchKernel",
            )
            driver.check(driver.lib.cuEventRecord(end, None), "cuEventRecord")
            driver.check(driver.lib.cuCtxSynchronize(), "the kernel (cuCtxSynchronize)", KernelFault)
            elapsed = ctypes.c_float()
            driver.check(driver.lib.cuEventElapsedTime(ctypes.byref(elapsed), start, end), "cuEventElapsedTime")
            elapsed_ms.append(elapsed.value)
        driver.lib.cuEventDestroy_v2(start)
        driver.lib.cuEventDestroy_v2(end)

        if dump_dir is not None:
            out = os.path.join(dump_dir, os.path.basename(os.path.normpath(directory)))
            os.makedirs(out, exist_ok=True)
            for buffer in launch["buffers"]:
                contents = ctypes.create_string_buffer(max(buffer["bytes"], 1))
                if buffer["bytes"] > 0:
                    driver.check(
                        driver.lib.cuMemcpyDtoH_v2(contents, addresses[buffer["name"]], buffer["bytes"]),
                        "cuMemcpyDtoH",
                    )
                with open(os.path.join(out, buffer["file"]), "wb") as file:
                    file.write(contents.raw[: buffer["bytes"]])
        return {
            "export": directory,
            "kernel": launch["kernel"],
            "grid": grid,
            "block": block,
            **attributes,
            "elapsed_ms": elapsed_ms,
            "jit_log": jit_log,
        }
    finally:
        for address in allocated:
            driver.lib.cuMemFree_v2(address)
        driver.lib.cuModuleUnload(module)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("exports", nargs="+", metavar="EXPORT_DIR", help="directories written by `warpsim export`")
    parser.add_argument("--dump", metavar="DIR", help="write each buffer's final contents to DIR/EXPORT/FILE")
    parser.add_argument("--summary", metavar="FILE", help="write the device and each launch's JIT results as JSON")
    parser.add_argument("--repeat", type=int, default=1, metavar="N",
                        help="launch each kernel N times, from its initial buffers each time (dumps are of the last)")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat takes a number of launches, at least 1")
    driver = Driver()
    device = driver.device_description()
    print(f"launch.py: {device['name']} (sm_{device['compute_capability'].replace('.', '')}, "
          f"{device['sms']} SMs), CUDA driver {device['cuda_driver_version']}", file=sys.stderr)
    launches = []
    failed = False
    for directory in args.exports:
        try:
            record = replay(driver, directory, args.dump, args.repeat)
            times = ", ".join(f"{ms:.3f}" for ms in record["elapsed_ms"])
            print(f"launch.py: {directory}: {record['kernel']} ran, {record['registers']} registers, "
                  f"{times} ms", file=sys.stderr)
        except BadExport as error:
            print(f"launch.py: error: {error}", file=sys.stderr)
            sys.exit(2)
        except CudaError as error:
            print(f"launch.py: {directory}: {error}", file=sys.stderr)
            launches.append({"export": directory, "error": str(error)})
            failed = True
            if isinstance(error, KernelFault):
                # The context is unusable now: the rest would fail too.
                break
            continue
        launches.append(record)
    if args.summary:
        with open(args.summary, "w") as file:
            json.dump({"device": device, "launches": launches}, file, indent=1)
            file.write("\n")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
