# frozen_string_literal: true

require_relative 'support'

# Each model's way of waiting, timed for real (generous margins: the machine
# is shared, and loaded). S = 300 ms sleeps throughout.
class WaitingTest < Minitest::Test
  include Support
  include TargetHelpers

  def test_sequential_serves_one_request_at_a_time_and_par_in_order
    with('sequential') do |t|
      ms, codes = concurrently(t.url, 3, '/work?steps=sleep:300')
      assert_equal [200] * 3, codes
      assert_operator ms, :>=, 850, '3 concurrent sleeps on one thread take 3 S'
      ms = get(t.url, '/work?steps=par(sleep:300,sleep:300)')[3]
      assert_operator ms, :>=, 580, 'par children run one after another'
    end
  end

  def test_pool_of_4_serves_8_sleeps_in_two_rounds_and_queues_the_rest
    with('pool', '--threads', '4', '--metrics-port', '0') do |t|
      load = Thread.new { concurrently(t.url, 8, '/work?steps=sleep:600') }
      sleep 0.3 # inside the first round
      text = get(t.metrics_url, '/metrics')[2]
      ms, codes = load.value
      assert_equal [200] * 8, codes
      assert_operator ms, :>=, 1150, 'two rounds of 600 ms'
      assert_operator ms, :<, 2300, 'not one request at a time'
      assert_equal 4, metric(text, 'iolab_requests_in_flight'), text
      assert_equal 4, metric(text, 'iolab_requests_queued'), text
      ms = get(t.url, '/work?steps=par(sleep:300,sleep:300,sleep:300)')[3]
      assert_operator ms, :<, 560, 'par children overlap on threads of their own'
    end
  end

  def test_loop_async_overlaps_every_wait_but_a_cpu_step_blocks_the_loop
    with('loop-async') do |t|
      ms, codes = concurrently(t.url, 40, '/work?steps=sleep:300')
      assert_equal [200] * 40, codes
      assert_operator ms, :<, 1000, '40 timers wait together'
      assert_operator get(t.url, '/work?steps=par(sleep:300,sleep:300,sleep:300)')[3], :<, 560
      terms = cpu_terms_for(1.0)
      cpu = Thread.new { get(t.url, "/work?steps=cpu:#{terms}")[3] }
      sleep 0.1
      started = now
      get(t.url, '/work?steps=sleep:1')
      waited = (now - started) * 1000
      cpu_ms = cpu.value
      assert_operator waited, :>=, (cpu_ms - 100) * 0.5, "a 1 ms sleep waited for the loop (cpu took #{cpu_ms.round} ms)"
    end
  end

  def test_prefork_shares_the_socket_between_its_processes
    with('prefork', '--processes', '2') do |t|
      assert_equal 2, children(t.pid).size, 'two unicorn workers'
      ms, codes = concurrently(t.url, 4, '/work?steps=sleep:600')
      assert_equal [200] * 4, codes
      assert_operator ms, :>=, 1150, 'two processes, two rounds'
      assert_operator ms, :<, 2300
      text = get(t.url, '/metrics')[2]
      assert_equal 4, metric(text, 'iolab_requests_completed_total'), 'summed over the workers'
    end
  end

  def test_loop_async_pipelines_mc_gets_on_mc_pool_connections
    skip_unless(:mc)
    mc_set(ENV['IOLAB_MC'], 'iolab-ruby-test', 'x' * 100_000)
    mc_port = Integer(ENV['IOLAB_MC'][/\d+\z/])
    { 'loop-async' => [1, 3], 'pool' => [1, 2] }.each do |model, pools|
      pools.each do |n|
        with(model, '--mc-pool', n.to_s) do |t|
          _, codes = concurrently(t.url, 8, '/work?steps=mc:iolab-ruby-test')
          assert_equal [200] * 8, codes
          assert_equal n, connections_to(t.pid, mc_port), "#{model} --mc-pool #{n}: connections to memcached"
        end
      end
    end
  end
end
