# frozen_string_literal: true

require_relative 'support'
require_relative '../lib/iolab/query'

# vectors/steps.json against the Ruby port of the parser: canonical forms,
# leaf counts and error texts, byte for byte.
class StepsVectorsTest < Minitest::Test
  CASES = JSON.parse(File.read(File.join(Support::VECTORS, 'steps.json')))['cases']

  def test_every_vector
    CASES.each do |c|
      if c['error']
        e = assert_raises(Iolab::StepsError, c['input']) { Iolab::Steps.parse(c['input']) }
        assert_equal c['error'], e.message, c['input']
      else
        step = Iolab::Steps.parse(c['input'])
        assert_equal [c['canonical'], c['leaves']], [step.canonical, step.leaf_count], c['input']
      end
    end
  end

  def test_canonical_text_parses_back_to_itself
    CASES.reject { |c| c['error'] }.each do |c|
      canonical = Iolab::Steps.parse(c['input']).canonical
      assert_equal canonical, Iolab::Steps.parse(canonical).canonical
    end
  end

  def test_limits_the_vectors_do_not_cover
    assert_match(/more than 1000 steps at/, raise_message { Iolab::Steps.parse((['sleep:1'] * 1001).join(',')) })
    assert_match(/input longer than 16384 bytes at 16384/, raise_message { Iolab::Steps.parse('sleep:1,' * 3000) })
    assert_equal "steps: expected a step, found 'é' at 0", raise_message { Iolab::Steps.parse('é') }
    assert_equal 'steps: memcached key longer than 250 bytes at 3', raise_message { Iolab::Steps.parse("mc:#{'k' * 251}") }
  end

  def test_query_decoding_matches_the_rust_routes
    assert_equal 'par(sleep:10,sleep:10)', Iolab::Query.work('x=1&steps=par%28sleep%3A10%2Csleep%3A10%29').step.canonical
    assert_equal 'bad percent-encoding in query at 0: expected %XX with two hex digits',
                 raise_message { Iolab::Query.work('steps=%2') }
    assert_equal 'query is not UTF-8 after percent-decoding', raise_message { Iolab::Query.work('steps=%ff') }
    refute Iolab::Query.work('steps=mc:a&bodyx=value').value_body, '`bodyx=` is not `body=`'
    assert Iolab::Query.work('body=value&steps=seq(sleep:1,mc:a)').value_body
  end

  private

  def raise_message
    yield
    flunk 'no error raised'
  rescue Iolab::StepsError, Iolab::WorkError => e
    e.message
  end
end
