# frozen_string_literal: true

require 'net/http'
require_relative 'counters'

module Iolab
  # --warmup N: the target sends itself N small requests over loopback before
  # it prints its URL (first connections, first pool leases, Ruby's method
  # caches), then zeroes its counters so /metrics starts from a clean slate.
  module Warmup
    CLIENTS = 8

    def self.run(port, n)
      left = Queue.new
      n.times { left << true }
      left.close
      clients = Array.new([CLIENTS, n].min) do
        Thread.new do
          Net::HTTP.start('127.0.0.1', port, read_timeout: 30) do |http|
            http.get('/work?steps=sleep:1') while left.pop
          end
        rescue StandardError => e
          warn "iolab: warm-up request failed: #{e.message}"
        end
      end
      clients.each(&:join)
      Net::HTTP.start('127.0.0.1', port) { |http| %w[/health /metrics /nope].each { |p| http.get(p) } }
    rescue StandardError => e
      warn "iolab: warm-up failed: #{e.message}"
    ensure
      Counters.reset
    end
  end
end
