extension Duration {
    /// The nearest whole milliseconds: the one place where a length of time becomes the
    /// milliseconds that instants on a `MillisecondClock` are counted in. (Nearest, not
    /// truncated: `.seconds(2.4)` is 2.399999... seconds in binary and must still be 2,400.)
    public var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        let fraction = (Double(attoseconds) / 1e15).rounded()
        return seconds * 1_000 + Int64(fraction)
    }
}
