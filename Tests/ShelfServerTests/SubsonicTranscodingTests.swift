import Foundation
import Shelf
import ShelfTestSupport
import Testing

/// The `transcoding` extension through a real server: a client's ClientInfo posted as JSON, the
/// decision (direct play, which transcode, or neither with the reasons), and the stream it names.
@Suite(.serialized) struct SubsonicTranscodingTests {
    @Test func decisionsFollowWhatTheClientPlaysAndTheStreamServesThem() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 2)
            defer { fixture.remove() }
            let server = try ServerProcess(library: fixture.library)
            defer { server.stop() }
            let ann = SubsonicClient(server)
            let song = try #require(try ann.ok("getSong", [("id", "tr-1")])["song"] as? [String: Any])
            let suffix = try #require(song["suffix"] as? String)
            let query = SubsonicClient.encode(ann.auth + [("v", "1.16.1"), ("c", "test"), ("f", "json")])
            func decide(_ body: String, _ extra: [(String, String)] = [("mediaId", "tr-1"), ("mediaType", "song")], format: String = "json") throws
                -> HTTPResult
            {
                try ann.curl.request(
                    "POST",
                    "/rest/getTranscodeDecision.view?\(query.replacingOccurrences(of: "f=json", with: "f=\(format)"))&"
                        + SubsonicClient.encode(extra), body: Data(body.utf8))
            }
            func decision(_ body: String) throws -> [String: Any] {
                let result = try decide(body)
                let root = try #require((result.json as? [String: Any])?["subsonic-response"] as? [String: Any], "\(result.text)")
                #expect(root["status"] as? String == "ok", "\(root)")
                return try #require(root["transcodeDecision"] as? [String: Any])
            }

            // The file's own container: direct play, and the stream is the file.
            let direct = try decision(
                """
                {"name": "Test", "platform": "Linux", "directPlayProfiles": [{"containers": ["\(suffix)"], "audioCodecs": [], "protocols": ["http"]}]}
                """)
            #expect(direct["canDirectPlay"] as? Bool == true && direct["canTranscode"] as? Bool == false)
            let params = try #require(direct["transcodeParams"] as? String)
            let source = try #require(direct["sourceStream"] as? [String: Any])
            #expect(source["container"] as? String == suffix && source["protocol"] as? String == "http")
            let whole = try ann.raw("getTranscodeStream", [("mediaId", "tr-1"), ("mediaType", "song"), ("transcodeParams", params)])
            let file = try ann.raw("download", [("id", "tr-1")])
            #expect(whole.status == 200 && whole.body == file.body)

            // Neither container nor codec taken, a transcoding profile for mp3 under a bit rate cap.
            let other = suffix == "mp3" ? "flac" : "mp3"
            let body = """
                {"name": "Phone", "platform": "Android", "maxTranscodingAudioBitrate": 96000,
                 "directPlayProfiles": [{"containers": ["\(other)"], "audioCodecs": ["\(other)"], "protocols": ["http"]}],
                 "transcodingProfiles": [{"container": "mp4", "audioCodec": "flac", "protocol": "hls"},
                                         {"container": "mp3", "audioCodec": "mp3", "protocol": "http", "maxAudioChannels": 1}]}
                """
            let transcode = try decision(body)
            #expect(transcode["canDirectPlay"] as? Bool == false && transcode["canTranscode"] as? Bool == true)
            #expect((transcode["transcodeReason"] as? [String])?.first?.contains("ContainerNotSupported") == true)
            let target = try #require(transcode["transcodeStream"] as? [String: Any])
            #expect(target["codec"] as? String == "mp3" && target["audioBitrate"] as? Int == 96_000 && target["audioChannels"] as? Int == 1)
            let transcodeParams = try #require(transcode["transcodeParams"] as? String)
            let stream = try ann.raw("getTranscodeStream", [("mediaId", "tr-1"), ("mediaType", "song"), ("transcodeParams", transcodeParams)])
            #expect(stream.status == 200 && stream.headers["content-type"] == "audio/mpeg")
            #expect(stream.body.prefix(3) == Data("ID3".utf8) || stream.body.first == 0xFF)
            let probe = fixture.root.appendingPathComponent("t.mp3")
            try stream.body.write(to: probe)
            let probed = try ChildProcess.run(
                URL(fileURLWithPath: "/usr/bin/ffprobe"),
                ["-v", "error", "-show_entries", "stream=channels,codec_name", "-of", "csv=p=0", probe.path])
            #expect(probed.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "mp3,1")

            // A required codec limitation the file breaks rules out direct play; the reason says which.
            let limited = try decision(
                """
                {"name": "Old", "platform": "Car", "directPlayProfiles": [{"containers": [], "audioCodecs": [], "protocols": []}],
                 "codecProfiles": [{"type": "AudioCodec", "name": "\(source["codec"] as? String ?? "")",
                                    "limitations": [{"name": "audioSamplerate", "comparison": "LessThanEqual", "values": ["8000"], "required": true}]}],
                 "transcodingProfiles": [{"container": "ogg", "audioCodec": "opus", "protocol": "http"}]}
                """)
            #expect(limited["canDirectPlay"] as? Bool == false && (limited["transcodeReason"] as? [String]) == ["AudioSamplerateNotSupported"])
            #expect((limited["transcodeStream"] as? [String: Any])?["container"] as? String == "ogg")
            // Nothing fits: neither, with the reason.
            let none = try decision(
                """
                {"name": "HLS only", "platform": "TV", "transcodingProfiles": [{"container": "mp4", "audioCodec": "aac", "protocol": "hls"}]}
                """)
            #expect(none["canDirectPlay"] as? Bool == false && none["canTranscode"] as? Bool == false)
            #expect((none["errorReason"] as? String)?.isEmpty == false && none["transcodeParams"] == nil)
            // XML carries the same.
            let xml = try decide(body, format: "xml")
            #expect(
                xml.text.contains("<transcodeDecision canDirectPlay=\"false\" canTranscode=\"true\"") && xml.text.contains("<transcodeStream protocol=\"http\"")
            )

            // Bad input: the spec's codes, and plain HTTP statuses from the stream.
            func code(_ result: HTTPResult) -> Int? {
                (((result.json as? [String: Any])?["subsonic-response"] as? [String: Any])?["error"] as? [String: Any])?["code"] as? Int
            }
            #expect(code(try decide(body, [("mediaType", "song")])) == 10)
            #expect(code(try decide(body, [("mediaId", "tr-1"), ("mediaType", "video")])) == 0)
            #expect(code(try decide(body, [("mediaId", "tr-999"), ("mediaType", "song")])) == 70)
            #expect(code(try decide("not json")) == 0)
            #expect(code(try decide("{\"platform\": \"x\"}")) == 0)
            #expect(try ann.errorCode("getTranscodeDecision", [("mediaId", "tr-1"), ("mediaType", "song")]) == 0)
            #expect(try ann.raw("getTranscodeStream", [("mediaId", "tr-1"), ("mediaType", "song")]).status == 400)
            #expect(try ann.raw("getTranscodeStream", [("mediaId", "tr-1"), ("mediaType", "song"), ("transcodeParams", "wav-1-1")]).status == 400)
            #expect(try ann.raw("getTranscodeStream", [("mediaId", "tr-999"), ("mediaType", "song"), ("transcodeParams", params)]).status == 404)
            #expect(
                try ann.raw("getTranscodeStream", [("mediaId", "tr-1"), ("mediaType", "song"), ("transcodeParams", params), ("offset", "-4")]).status == 400)
        }
    }
}
