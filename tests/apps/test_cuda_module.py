#!/usr/bin/env python3
"""Issue 19 item 12: in a CUDA-enabled build no program links a CUDA library;
the CUDA backend is the run-time module libllm-cuda.so.

usage: test_cuda_module.py BIN_DIR MODEL PROGRAM...
Prints PASS/FAIL/SKIP per check; exit 0 / 1.

- ldd of every PROGRAM (and every other executable in BIN_DIR) lists no CUDA library (libcudart, libcublas,
  libcublasLt, libcurand, libcuda), while ldd of the module does (so ldd
  itself is shown to see them);
- a CPU run (--backend auto and cpu) maps no CUDA library (/proc/PID/maps,
  read while llm-chat waits for its prompt on stdin);
- --backend cuda without the module, or without a device, fails with a clear
  message naming CUDA, exit 1.
"""
import os
import re
import subprocess
import sys
import time

CUDA_LIB = re.compile(r"lib(cudart|cublas|cublasLt|curand|cuda|nvrtc|cudnn)\.so")
FAILS = []


def check(name, cond, detail=""):
    print(("PASS " if cond else "FAIL ") + name + ("" if cond else ": " + str(detail)[:1500]))
    if not cond:
        FAILS.append(name)


def ldd(path):
    p = subprocess.run(["ldd", path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return p.stdout.decode("utf-8", "replace")


def maps_during_cpu_run(chat, model, backend):
    p = subprocess.Popen([chat, "-m", model, "-t", "1", "-c", "256", "--backend", backend, "-n", "1"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    maps = ""
    try:
        # The model is loaded before stdin is read: wait for the load, then look.
        deadline = time.time() + 120
        while time.time() < deadline and p.poll() is None:
            with open("/proc/%d/status" % p.pid) as f:
                status = f.read()
            with open("/proc/%d/maps" % p.pid) as f:
                maps = f.read()
            if SmolLM_loaded(maps) and "State:\tS" in status:
                time.sleep(0.5)
                with open("/proc/%d/maps" % p.pid) as f:
                    maps = f.read()
                break
            time.sleep(0.1)
    finally:
        out, err = p.communicate(b"hi\n", timeout=120)
    return maps, p.returncode, err.decode("utf-8", "replace")


def SmolLM_loaded(maps):
    return ".gguf" in maps


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    bindir, model, programs = sys.argv[1], sys.argv[2], sys.argv[3:]
    module = os.path.join(bindir, "libllm-cuda.so")
    if not os.path.exists(module):
        print("FAIL the CUDA module %s was not built" % module)
        return 1
    # The named programs, and every other executable beside them (tests, benches).
    others = sorted(os.path.join(bindir, n) for n in os.listdir(bindir)
                    if n != "libllm-cuda.so" and os.path.isfile(os.path.join(bindir, n))
                    and os.access(os.path.join(bindir, n), os.X_OK))
    for prog in programs + [o for o in others if o not in programs]:
        out = ldd(prog)
        check("ldd %s: no CUDA library" % os.path.basename(prog), not CUDA_LIB.search(out),
              [l.strip() for l in out.splitlines() if CUDA_LIB.search(l)])
    check("ldd libllm-cuda.so: the module does link the CUDA libraries", "libcublas" in ldd(module), ldd(module))

    chat = os.path.join(bindir, "llm-chat")
    if not os.path.isfile(model):
        print("SKIP run checks: model not found: %s" % model)
        return 1 if FAILS else 0
    for backend in ("auto", "cpu"):
        maps, rc, err = maps_during_cpu_run(chat, model, backend)
        if "backend: cpu" not in err:
            print("SKIP --backend %s maps: this machine runs it on a GPU" % backend)
            continue
        cuda_maps = sorted({l.split()[-1] for l in maps.splitlines() if CUDA_LIB.search(l)})
        check("--backend %s on the CPU maps no CUDA library" % backend, rc == 0 and ".gguf" in maps and not cuda_maps,
              (rc, cuda_maps, err[-300:]))

    env = dict(os.environ, LLM_CUDA_MODULE="/nonexistent/libllm-cuda.so")
    p = subprocess.run([chat, "-m", model, "--backend", "cuda", "-p", "hi"], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    err = p.stderr.decode("utf-8", "replace")
    check("--backend cuda without the module: exit 1, says the module is missing",
          p.returncode == 1 and "CUDA backend module" in err and "/nonexistent/libllm-cuda.so" in err, err[-400:])
    if not os.path.exists("/proc/driver/nvidia/version"):
        p = subprocess.run([chat, "-m", model, "--backend", "cuda", "-p", "hi"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        err = p.stderr.decode("utf-8", "replace")
        check("--backend cuda without a device: exit 1, a message naming CUDA",
              p.returncode == 1 and "cuda" in err.lower() and "device" in err.lower(), err[-400:])
    print("%d failure(s)" % len(FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
