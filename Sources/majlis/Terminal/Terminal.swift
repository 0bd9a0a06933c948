import Foundation
import MajlisCommandLine

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The controlling terminal in raw mode on the alternate screen; `restore()` puts it back.
final class Terminal: @unchecked Sendable {
    // Audited: `original` is written once in init and read in restore; writes go straight to fd 1.
    private var original = termios()
    private let lock = NSLock()
    private var restored = false

    init() throws {
        guard isatty(0) == 1, isatty(1) == 1 else { throw Arguments.Failure(description: "--tui needs a terminal") }
        tcgetattr(0, &original)
        var raw = original
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | IEXTEN | ISIG)
        raw.c_iflag &= ~tcflag_t(IXON | ICRNL | BRKINT | INPCK | ISTRIP)
        raw.c_cc.16 = 1  // VMIN
        raw.c_cc.17 = 0  // VTIME
        tcsetattr(0, TCSAFLUSH, &raw)
        write("\u{1B}[?1049h\u{1B}[?25l\u{1B}[2J")
    }

    /// Rows and columns.
    var size: (rows: Int, columns: Int) {
        var size = winsize()
        if ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0, size.ws_col > 0 { return (Int(size.ws_row), Int(size.ws_col)) }
        return (24, 80)
    }

    func write(_ text: String) {
        lock.withLock {
            let bytes = Array(text.utf8)
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes { Glibc.write(1, $0.baseAddress, $0.count) }
                if written <= 0 { break }
                offset += written
            }
        }
    }

    /// Draws `lines` over the whole screen.
    func draw(_ lines: [String]) {
        var frame = "\u{1B}[H"
        for (row, line) in lines.enumerated() { frame += "\u{1B}[\(row + 1);1H\(line)\u{1B}[K" }
        frame += "\u{1B}[J"
        write(frame)
    }

    func restore() {
        let first = lock.withLock { () -> Bool in
            defer { restored = true }
            return !restored
        }
        guard first else { return }
        write("\u{1B}[?25h\u{1B}[?1049l")
        tcsetattr(0, TCSANOW, &original)
    }
}
