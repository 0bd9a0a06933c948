import MajlisTransport
/// Where the media router's packets go: a socket in the server, a recorder in tests.
public protocol RouterOutput {
    /// One datagram of its own: a binding answer, a report, a NACK, a retransmission.
    mutating func send(_ bytes: [UInt8], to address: UDPAddress)
    /// One copy of a forwarded packet: `fill` writes it into the slot it is given and returns
    /// its length (nil: no copy).
    mutating func forward(to address: UDPAddress, _ fill: (UnsafeMutableRawBufferPointer) -> Int?)
    /// Every copy of the packet being forwarded has been given; returns how many went out.
    mutating func flush() -> Int
}
