import Foundation
import MajlisAudio
import MajlisLab
import MajlisProtocol
import MajlisTestSupport
import Testing

/// Spatial sound at the ears: a speaker on the left reaches the left ear first and louder (by the
/// HRTF's own delay), one on the right the other way, front and back differ, and distance lowers it.
@Suite struct SpatializerTests {
    @Test(arguments: [90.0, -90, 45, -30])
    func aSpeakerToOneSideReachesThatEarFirstAndLouder(azimuth: Double) async throws {
        let figures = try await offPoolInPairs { try ToolboxTrial.spatial(SpatialPosition(azimuth: azimuth)) }
        print(String(format: "at %+.0f degrees: the left ear leads by %.3f ms (HRTF %.3f), louder by %.1f dB", azimuth, figures.interauralDelay, figures.hrtfDelay, figures.levelDifference))
        #expect(abs(figures.interauralDelay - figures.hrtfDelay) <= 0.1)
        if azimuth > 0 {
            #expect(figures.interauralDelay > 0.1 && figures.levelDifference > 2)
        } else {
            #expect(figures.interauralDelay < -0.1 && figures.levelDifference < -2)
        }
        if abs(azimuth) == 90 { #expect(abs(figures.interauralDelay) > 0.4, "a head's width apart") }
    }

    @Test func frontAndBackSoundDifferent() async throws {
        let (front, back) = try await offPoolInPairs {
            (try ToolboxTrial.spatial(SpatialPosition(azimuth: 0)).stereo, try ToolboxTrial.spatial(SpatialPosition(azimuth: 180)).stereo)
        }
        // Both centred (no delay between the ears), but not the same sound.
        let difference = zip(front, back).reduce(0.0) { $0 + pow(Double($1.0) - Double($1.1), 2) }
        let power = front.reduce(0.0) { $0 + Double($1) * Double($1) }
        #expect(difference / power > 0.1, "front and back differ by \(difference / power) of the power")
    }

    @Test func fartherIsQuieter() async throws {
        let (near, far) = try await offPoolInPairs {
            (try ToolboxTrial.spatial(SpatialPosition(azimuth: 30, distance: 1)).stereo, try ToolboxTrial.spatial(SpatialPosition(azimuth: 30, distance: 3)).stereo)
        }
        let drop = LevelMeter.dBov(near) - LevelMeter.dBov(far)
        #expect(abs(drop - 9.5) < 1.5, "3 m is \(drop) dB quieter than 1 m")
    }

    @Test func seatsSitOnAnArcFromLeftToRight() {
        #expect(SpatialPosition.seat(0, of: 5).azimuth == 75)
        #expect(SpatialPosition.seat(2, of: 5).azimuth == 0)
        #expect(SpatialPosition.seat(4, of: 5).azimuth == -75)
        #expect(SpatialPosition.seat(0, of: 1).azimuth == 0)
    }
}
