# frozen_string_literal: true

require_relative 'support'

# The blocking clients (pool, the same as sequential and prefork use) and the
# evented ones (loop-async) against real servers: a backend that is down is a
# 503 and the target keeps going; a full pool is a 503 after --pg-wait; a miss
# is a 502; body=value answers E4's 1,024,000-byte value byte for byte.
class BackendsTest < Minitest::Test
  include Support
  include TargetHelpers

  E4_VALUE = ('iolab-e4-' * 120_000).byteslice(0, 1_024_000)

  def test_the_required_backends_are_configured
    Support::BACKEND_ENV.each_key { |kind| skip_unless(kind) }
  end

  def test_a_backend_that_is_down_is_a_503_and_the_target_keeps_going
    port = closed_port
    flags = ['--mc', "127.0.0.1:#{port}", '--pg', "postgres://postgres@127.0.0.1:#{port}/postgres",
             '--http-backend', "http://127.0.0.1:#{port}"]
    %w[pool loop-async].each do |model|
      with(model, *flags) do |t|
        { 'mc' => 'mc:k', 'pg' => 'pg:1', 'http' => 'http:1' }.each do |kind, steps|
          status, _, body = get(t.url, "/work?steps=#{steps}")
          assert_equal 503, status, "#{model} #{kind}: #{body}"
          assert_includes body, "backend '#{kind}' unavailable", model
        end
        assert_equal 200, get(t.url, '/work?steps=sleep:1')[0], "#{model} still serves"
      end
    end
  end

  def test_a_full_pg_pool_answers_503_after_pg_wait
    skip_unless(:pg)
    %w[pool loop-async].each do |model|
      with(model, '--pg-pool', '1', '--pg-wait', '300') do |t|
        results = Array.new(2) { Thread.new { get(t.url, '/work?steps=pg:1500') } }.map(&:value)
        assert_equal [200, 503], results.map(&:first).sort, model
        assert_includes results.map { _1[2] }.join, "backend 'pg' pool timeout after 300 ms"
      end
    end
  end

  def test_body_value_is_the_e4_value_and_a_miss_is_a_502
    skip_unless(:mc)
    mc_set(ENV['IOLAB_MC'], 'iolab-ruby-e4', E4_VALUE)
    %w[sequential pool loop-async prefork].each do |model|
      with(model) do |t|
        status, type, body = get(t.url, '/work?steps=seq(sleep:1,mc:iolab-ruby-e4)&body=value')
        assert_equal [200, 'application/octet-stream'], [status, type], model
        assert_equal E4_VALUE.b, body.b, "#{model}: the value, byte for byte"
        status, _, body = get(t.url, '/work?steps=mc:iolab-ruby-absent')
        assert_equal 502, status, model
        assert_includes body, "key 'iolab-ruby-absent' not found"
      end
    end
  end

  def test_every_backend_in_one_request
    Support::BACKEND_ENV.each_key { |k| skip_unless(k) }
    mc_set(ENV['IOLAB_MC'], 'iolab-ruby-small', 'v')
    %w[sequential pool loop-async prefork].each do |model|
      with(model) do |t|
        status, _, body = get(t.url, '/work?steps=par(pg:20,http:20,mc:iolab-ruby-small,sleep:20,cpu:1000)')
        assert_equal 200, status, "#{model}: #{body}"
        assert_equal 5, JSON.parse(body)['steps']
      end
    end
  end
end
