/// Frames between mono and interleaved stereo.
public enum Channels {
    /// Mono as interleaved stereo (the same in both channels).
    public static func widen(_ mono: [Int16]) -> [Int16] { mono.flatMap { [$0, $0] } }

    /// Interleaved stereo made mono (the mean of each pair).
    public static func downmix(_ stereo: [Int16]) -> [Int16] {
        var mono = [Int16](repeating: 0, count: stereo.count / 2)
        for index in mono.indices {
            let sum = Int(stereo[2 * index]) + Int(stereo[2 * index + 1])
            mono[index] = Int16(sum / 2)
        }
        return mono
    }

    /// `frame` of `from` channels as `to` channels (1 or 2).
    public static func convert(_ frame: [Int16], from: Int, to: Int) -> [Int16] {
        from == to ? frame : to == 2 ? widen(frame) : downmix(frame)
    }
}
