import Foundation
import FuzzDriver
import MajlisProtocol

/// Any bytes as JSON text: parsed (a value or a clear failure, never a crash), with work linear
/// in the input: no more values than bytes, nesting within the limit, and a value read back
/// the same after writing it out. With MAJLIS_FUZZ_SLOW_MS set, an input whose parse takes
/// longer is a finding (libFuzzer keeps it): in the thread's own CPU time, the least of three
/// tries, so that a stall of the machine's (another process's build, page reclaim) is not.
let slowLimit = ProcessInfo.processInfo.environment["MAJLIS_FUZZ_SLOW_MS"].flatMap(Double.init)

/// This thread's CPU time, in milliseconds.
func threadMilliseconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) * 1e3 + Double(time.tv_nsec) / 1e6
}

func count(_ value: JSONValue, depth: Int = 1) -> (values: Int, depth: Int) {
    switch value {
    case .array(let items):
        return items.reduce((1, depth)) { total, item in
            let inner = count(item, depth: depth + 1)
            return (total.0 + inner.values, max(total.1, inner.depth))
        }
    case .object(let members):
        return members.values.reduce((1, depth)) { total, item in
            let inner = count(item, depth: depth + 1)
            return (total.0 + inner.values, max(total.1, inner.depth))
        }
    default:
        return (1, depth - 1)
    }
}

/// Equal, numbers by value (a whole `1.0` is written back as `1`, an integer).
func same(_ a: JSONValue, _ b: JSONValue) -> Bool {
    switch (a, b) {
    case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy(same)
    case (.object(let x), .object(let y)): return x.count == y.count && x.allSatisfy { key, value in y[key].map { same(value, $0) } ?? false }
    default:
        if let x = a.doubleValue, let y = b.doubleValue { return x == y }
        return a == b
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzJSON(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let input = UnsafeBufferPointer(start: bytes, count: count)
    func timedParse() -> (JSONValue?, Double) {
        let started = threadMilliseconds()
        let parsed = try? JSONParser().parse(input)
        return (parsed, threadMilliseconds() - started)
    }
    let (parsed, spent) = timedParse()
    if let slowLimit, spent > slowLimit {
        let least = min(spent, timedParse().1, timedParse().1)
        precondition(least <= slowLimit, "a slow input: \(least) ms for \(count) bytes")
    }
    if let parsed {
        let shape = FuzzJSON.count(parsed)
        precondition(shape.values <= count && shape.depth <= JSONParser.maxDepth)
        let written = try! JSONEncoder().encode(parsed)
        precondition((try? JSONParser().parse(written)).map { same($0, parsed) } == true)
    }
    _ = RequestDecoder.decode(Data(input))
    return 0
}

runFuzzer(fuzzJSON)
