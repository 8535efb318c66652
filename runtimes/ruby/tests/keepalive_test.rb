# frozen_string_literal: true

require 'socket'
require_relative 'support'

# A connection answered `Connection: keep-alive` must serve the next request:
# Thin 1.8.1 says keep-alive past its persistent-connection limit (100) and
# then closes (servers/thin.rb), which load generators see as resets.
class KeepAliveTest < Minitest::Test
  include TargetHelpers

  CONNECTIONS = 120

  %w[sequential pool loop-async prefork].each do |model|
    define_method("test_#{model.tr('-', '_')}_keeps_its_keep_alive_promise") { promise_kept(model) }
  end

  private

  def promise_kept(model)
    with(model) do |t|
      socks = Array.new(CONNECTIONS) { TCPSocket.new('127.0.0.1', t.port) }
      broken = socks.each_with_index.count do |s, i|
        keep = exchange(s, i)
        keep && !exchange(s, i)
      end
      assert_equal 0, broken, "#{model}: connections that said keep-alive and then failed"
    ensure
      socks&.each(&:close)
    end
  end

  # One GET on s; whether the answer promised keep-alive (nil if it failed).
  def exchange(s, i)
    s.write("GET /work?steps=cpu:#{i} HTTP/1.1\r\nHost: x\r\n\r\n")
    head = +''
    head << s.readpartial(4096) until head.include?("\r\n\r\n")
    head, body = head.split("\r\n\r\n", 2)
    length = head[/^Content-Length: *(\d+)/i, 1].to_i
    body << s.readpartial(4096) while body.bytesize < length
    head.match?(/^Connection: *keep-alive/i)
  rescue EOFError, SystemCallError
    nil
  end
end
