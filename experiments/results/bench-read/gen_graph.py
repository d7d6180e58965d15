import sys, json
n = int(sys.argv[1]); out = sys.argv[2]
with open(out, "w") as f:
    f.write('{"format":"aware-graph","version":1,"name":"big","batch":32,"ops":[\n')
    for i in range(n):
        f.write('%s{"name":"op%d","type":"MatMul","flops":1e6,"output_bytes":[1e4],"param_bytes":100}\n' % ("," if i else "", i))
    f.write('],"edges":[\n')
    first = True
    for i in range(1, n):
        srcs = [i-1] + ([i//2] if i//2 != i-1 else [])
        for s in srcs:
            f.write('%s{"src":"op%d","dst":"op%d"}\n' % ("" if first else ",", s, i)); first = False
    f.write(']}\n')
