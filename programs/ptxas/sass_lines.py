import re, sys, collections
def read(path):
    kernels = collections.OrderedDict(); kernel=None; line=None
    for l in open(path):
        m = re.match(r"^([A-Za-z_][\w]*):$", l.strip())
        if m and not l.startswith("."):
            kernel = m.group(1); kernels[kernel] = []; continue
        m = re.search(r'//## File "([^"]+)", line (\d+)', l)
        if m: line = int(m.group(2)); continue
        m = re.search(r"\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", l)
        if m and kernel:
            op = m.group(2)
            if re.match(r"(LDS|STS|ATOMS|LD|ST|RED|ATOM)(\.|$)", op):
                kernels[kernel].append((line, op, l.split("*/")[1].strip()))
    return kernels
for k, v in read(sys.argv[1]).items():
    print(k)
    for e in v: print("   ", e[0], e[2])
