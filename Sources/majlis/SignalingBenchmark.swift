/// The signaling benchmark (filled in below).
enum SignalingBenchmark {
    static func run(_ arguments: [String]) throws -> Int32 {
        throw Arguments.Failure(description: "not built yet")
    }
}
